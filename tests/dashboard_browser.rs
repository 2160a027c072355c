//! The dashboard in a real browser: headless Chromium (Debian's `chromium`) driven by
//! playwright-core (pinned in tests/browser, installed by scripts/install-browser.sh into
//! .tools/browser) through tests/browser/dashboard.mjs. An MCP server runs a slow background
//! job with the fake CLI; the browser sees it appear and its progress move, opens its page,
//! cancels it; then no process of it is left. Another job's answer shows as markdown, the raw
//! HTML in it as text. A job isolated in a worktree shows its disk use in the list and its
//! diff on its page (the HTML it added as text), and its apply button brings it in. Screenshots of each step are kept in
//! target/test-artifacts/dashboard/.
//!
//! Without chromium or playwright-core the test is skipped with a message, except under
//! `CAM_TEST_REQUIRE_ALL=1` (CI), where that is a failure.

mod common;
mod mcp;
mod web;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{TempDir, assert_none_tagged, unique};
use serde_json::json;
use web::{Dashboard, GitRepo, background, server_on, streaming_job};

/// The browser and the driver, or why the test cannot run.
struct Browser {
    chromium: PathBuf,
    playwright: PathBuf,
}

impl Browser {
    fn find() -> Result<Self, String> {
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
        let playwright = root().join(".tools/browser/node_modules/playwright-core");
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
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Skips (with the reason on stderr), or fails where nothing may be skipped.
fn skip(why: &str) {
    assert!(
        std::env::var("CAM_TEST_REQUIRE_ALL").as_deref() != Ok("1"),
        "{why} (CAM_TEST_REQUIRE_ALL=1 forbids skipping)"
    );
    eprintln!("skipped: {why}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_a_running_job_appears_moves_and_is_cancelled_from_its_page() {
    let browser = match Browser::find() {
        Ok(browser) => browser,
        Err(why) => return skip(&why),
    };
    let state = TempDir::new("dash-browser");
    let mut server = server_on(state.path()).await;
    let tag = unique("dash-browser");
    let id = streaming_job(&mut server, &tag).await;
    let answer = "**Done**:_fixed_`parse()`_<img_src=x_onerror=alert(1)>";
    let answered = background(&mut server, "claude", &format!("answer={answer}")).await;
    let repo = GitRepo::new();
    let edited = "line one\n<b>applied</b> by the button\n";
    let reviewed = repo.isolated_edit(&mut server, edited).await;
    let dashboard = Dashboard::start(state.path()).await;

    let artifacts = root().join("target/test-artifacts/dashboard");
    let driver = tokio::process::Command::new("node")
        .arg(root().join("tests/browser/dashboard.mjs"))
        .env("DASHBOARD_URL", dashboard.url())
        .env("JOB_ID", &id)
        .env("ANSWERED_ID", &answered)
        .env("REVIEW_ID", &reviewed)
        .env("ARTIFACTS", &artifacts)
        .env("PLAYWRIGHT", &browser.playwright)
        .env("CHROMIUM", &browser.chromium)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(web::DEADLINE * 4, driver)
        .await
        .expect("the browser run did not end in time")
        .expect("run node");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        output.status.success(),
        "the browser run failed ({}):\n{stdout}\n{stderr}\nserver:\n{}",
        output.status,
        server.stderr()
    );
    for step in [
        "01-list-shows-the-running-job",
        "02-list-progress-moves",
        "03-job-page-streams-events",
        "04-cancel-cancels-the-job",
        "05-phone-list",
        "06-phone-job",
        "07-answer-as-markdown",
        "08-list-shows-the-worktrees-disk-use",
        "09-job-page-shows-its-diff",
        "10-apply-brings-it-into-the-workspace",
    ] {
        assert!(stdout.contains(&format!("ok {step}")), "{step}:\n{stdout}");
        assert!(
            artifacts.join(format!("{step}.png")).is_file(),
            "{step}.png"
        );
    }

    assert_eq!(repo.notes(), edited, "the button applied the job's edit");

    let waited = server
        .call("job_wait", json!({"job_ids": [&id], "timeout_secs": 30}))
        .await;
    assert_eq!(
        waited["structuredContent"]["jobs"][0]["status"], "cancelled",
        "{waited:#}"
    );
    assert_none_tagged(&tag);
}
