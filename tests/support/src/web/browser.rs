//! A real browser for tests: headless Chromium (Debian's `chromium`) driven by playwright-core
//! (pinned in tests/browser, installed by scripts/install-browser.sh into .tools/browser)
//! through a script of tests/browser that prints `ok <step>` per step and saves a screenshot
//! of each in target/test-artifacts/<name>/. Without Chromium or playwright-core a test is
//! skipped with a message, except under `CAM_TEST_REQUIRE_ALL=1` (CI), where that fails.

use std::path::PathBuf;
use std::process::Stdio;

use super::DEADLINE;
use crate::common::repo;

/// The browser and the driver.
pub struct Browser {
    chromium: PathBuf,
    playwright: PathBuf,
}

impl Browser {
    /// The browser, or `None` once the test has been skipped (see the module's doc).
    pub fn find() -> Option<Self> {
        match Self::look() {
            Ok(browser) => Some(browser),
            Err(why) => {
                assert!(
                    std::env::var("CAM_TEST_REQUIRE_ALL").as_deref() != Ok("1"),
                    "{why} (CAM_TEST_REQUIRE_ALL=1 forbids skipping)"
                );
                eprintln!("skipped: {why}");
                None
            }
        }
    }

    fn look() -> Result<Self, String> {
        let chromium = std::env::var_os("CAM_CHROMIUM")
            .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
        if !chromium.is_file() {
            return Err(format!(
                "no Chromium at {} (apt-get install -y chromium, or set CAM_CHROMIUM)",
                chromium.display()
            ));
        }
        let node = std::process::Command::new("node").arg("--version").output();
        if !node.is_ok_and(|node| node.status.success()) {
            return Err("no node on PATH (Node.js 20 or newer)".to_owned());
        }
        let playwright = repo().join(".tools/browser/node_modules/playwright-core");
        if !playwright.join("package.json").is_file() {
            return Err(format!(
                "no playwright-core in {} (run scripts/install-browser.sh)",
                playwright.display()
            ));
        }
        Ok(Self {
            chromium,
            playwright,
        })
    }

    /// Runs tests/browser/`script` with `env`, its screenshots going to
    /// target/test-artifacts/`artifacts`; checks it passed and printed `ok <step>` and saved
    /// `<step>.png` for each of `steps`. Returns what it printed; `context` is added to a failure.
    pub async fn run(
        &self,
        script: &str,
        env: &[(&str, &str)],
        artifacts: &str,
        steps: &[&str],
        context: impl FnOnce() -> String,
    ) -> String {
        let artifacts = repo().join("target/test-artifacts").join(artifacts);
        let driver = tokio::process::Command::new("node")
            .arg(repo().join("tests/browser").join(script))
            .envs(env.iter().copied())
            .env("ARTIFACTS", &artifacts)
            .env("PLAYWRIGHT", &self.playwright)
            .env("CHROMIUM", &self.chromium)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(DEADLINE * 4, driver)
            .await
            .expect("the browser run did not end in time")
            .expect("run node");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "the browser run failed ({}):\n{stdout}\n{stderr}\n{}",
            output.status,
            context()
        );
        for step in steps {
            assert!(stdout.contains(&format!("ok {step}")), "{step}:\n{stdout}");
            let shot = artifacts.join(format!("{step}.png"));
            assert!(shot.is_file(), "{}", shot.display());
        }
        stdout
    }
}
