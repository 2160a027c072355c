//! The kernel sandbox end to end (issue 17): the built server runs the fake CLI, whose
//! `write-probe` / `daemon-probe` tool calls try to write inside the workspace, in the home
//! directory, directly in the temp dir, through a symlink out of the workspace and from a
//! double-forked daemon. The fake obeys no permission flag, so only Landlock stands between
//! it and those files. Each probe's exact result goes to a log in the CLI's state directory
//! (`~/.codex`, writable at every level).

use crate::common;
use crate::mcp;

use std::path::{Path, PathBuf};

use common::temp_dir;
use mcp::{Server, all_text, is_error};
use serde_json::{Value, json};
use tempfile::TempDir;

/// Where the probes write, all in a temp dir of the test's own but `loose`.
struct Probes {
    root: TempDir,
    /// A file directly in the temp dir, outside the run's private `TMPDIR`.
    loose: PathBuf,
}

/// One attempted write: the fake's directive and its argument, and the file it makes when
/// allowed.
struct Probe {
    directive: &'static str,
    arg: String,
    file: PathBuf,
    in_workspace: bool,
}

impl Probe {
    /// How the probe log and the sandbox's warning name it.
    fn line(&self) -> String {
        format!("{} {}", self.directive, self.arg)
    }
}

impl Probes {
    fn new(name: &str) -> Self {
        let root = temp_dir(name);
        // `home/.codex` is made here too: a confined run makes it, an unconfined one not.
        for dir in ["ws", "home/.codex", "linked", "outside", "tmp"] {
            std::fs::create_dir_all(root.path().join(dir)).expect("probe dirs");
        }
        std::os::unix::fs::symlink(root.path().join("linked"), root.path().join("ws/out"))
            .expect("symlink");
        let loose = std::env::temp_dir().join(common::unique("cam-sandbox-loose"));
        Self { root, loose }
    }

    fn workspace(&self) -> PathBuf {
        self.root.path().join("ws")
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// The server's temp dir, where the runs' private `TMPDIR`s are made.
    fn server_tmp(&self) -> PathBuf {
        self.root.path().join("tmp")
    }

    fn log(&self) -> PathBuf {
        self.home().join(".codex/probes.log")
    }

    fn seen(&self) -> PathBuf {
        self.home().join(".codex/seen.json")
    }

    fn all(&self) -> Vec<Probe> {
        let write = |arg: &Path, file: PathBuf, in_workspace| Probe {
            directive: "write-probe",
            arg: arg.display().to_string(),
            file,
            in_workspace,
        };
        let daemon = self.root.path().join("outside/from-daemon.txt");
        vec![
            write(
                Path::new("in-workspace.txt"),
                self.workspace().join("in-workspace.txt"),
                true,
            ),
            write(
                &self.home().join("in-home.txt"),
                self.home().join("in-home.txt"),
                false,
            ),
            write(&self.loose, self.loose.clone(), false),
            write(
                Path::new("out/through-link.txt"),
                self.root.path().join("linked/through-link.txt"),
                false,
            ),
            Probe {
                directive: "daemon-probe",
                arg: daemon.display().to_string(),
                file: daemon,
                in_workspace: false,
            },
        ]
    }

    /// The prompt that makes the fake try every probe, log each result and say what it saw.
    fn prompt(&self) -> String {
        let probes = self.all();
        let args = |directive: &str| {
            let args: Vec<_> = probes
                .iter()
                .filter(|probe| probe.directive == directive)
                .map(|probe| probe.arg.as_str())
                .collect();
            args.join(",")
        };
        format!(
            "write-probe={} daemon-probe={} probe-log={} argv-out={} answer=probed",
            args("write-probe"),
            args("daemon-probe"),
            self.log().display(),
            self.seen().display()
        )
    }

    /// A server whose CLIs get this home (and codex's state dir in it, whatever the caller's
    /// `CODEX_HOME`) and whose runs' `TMPDIR`s go under `server_tmp`.
    fn server(&self) -> mcp::Builder {
        Server::builder()
            .env("HOME", self.home())
            .env("CODEX_HOME", self.home().join(".codex"))
            .env("TMPDIR", self.server_tmp())
            .env("CAM_MAX_PERMISSION", "unlimited")
    }

    /// Each probe's line in the log: `ok` or the errno's words.
    fn results(&self) -> String {
        std::fs::read_to_string(self.log()).unwrap_or_default()
    }

    /// The `TMPDIR` the CLI saw.
    fn cli_tmpdir(&self) -> Option<PathBuf> {
        let seen: Value = serde_json::from_slice(&std::fs::read(self.seen()).ok()?).ok()?;
        seen["env"]["TMPDIR"].as_str().map(PathBuf::from)
    }
}

impl Drop for Probes {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.loose);
    }
}

/// Landlock is what these tests prove; a kernel without it cannot show it.
fn landlock_missing() -> bool {
    let support = cli_agent_engine::sandbox::KernelSupport::current();
    if let Some(reason) = support.missing_reason() {
        common::skip_unless_required(&format!("the sandbox tests need Landlock: {reason}"));
        return true;
    }
    false
}

/// One codex call at `permission` in the probes' workspace; its result, which must answer.
async fn probe(server: &mut Server, probes: &Probes, permission: &str) -> Value {
    server.initialize().await;
    let result = server
        .call(
            "codex",
            json!({
                "prompt": probes.prompt(),
                "workspace": probes.workspace(),
                "permission": permission,
            }),
        )
        .await;
    assert!(!is_error(&result), "{result:#}\n{}", server.stderr());
    assert_eq!(
        result["structuredContent"]["status"], "completed",
        "{result:#}"
    );
    assert!(all_text(&result).contains("probed"), "{result:#}");
    result
}

fn warnings(result: &Value) -> String {
    result["structuredContent"]["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every probe went through when `allowed` says so, and was refused with EACCES (its file
/// absent, its call named in the sandbox's warning) when not.
fn assert_probes(probes: &Probes, result: &Value, allowed: impl Fn(&Probe) -> bool) {
    let results = probes.results();
    let warnings = warnings(result);
    for probe in probes.all() {
        let line = probe.line();
        if allowed(&probe) {
            assert!(
                results.contains(&format!("{line}: ok")),
                "{line}: {results}"
            );
            assert!(
                probe.file.exists(),
                "{} was not written",
                probe.file.display()
            );
            assert!(!warnings.contains(&line), "{warnings}");
        } else {
            assert!(
                results.contains(&format!("{line}: Permission denied (EACCES)")),
                "{line}: {results}"
            );
            assert!(!probe.file.exists(), "{} was written", probe.file.display());
            assert!(warnings.contains(&line), "{warnings}");
        }
    }
}

/// The warning names the sandbox and the level the call asked for.
fn assert_sandbox_warning(result: &Value, level: &str) {
    let warnings = warnings(result);
    assert!(
        warnings.contains(&format!("the Landlock sandbox ({level} level) refused")),
        "{warnings}"
    );
}

#[tokio::test]
async fn read_only_refuses_every_write_outside_the_clis_own_state() {
    if landlock_missing() {
        return;
    }
    let probes = Probes::new("cam-sandbox-ro");
    let mut server = probes.server().spawn();
    let result = probe(&mut server, &probes, "read-only").await;
    assert_probes(&probes, &result, |_| false);
    assert_sandbox_warning(&result, "read-only");
}

#[tokio::test]
async fn workspace_write_allows_the_workspace_only() {
    if landlock_missing() {
        return;
    }
    let probes = Probes::new("cam-sandbox-ww");
    let mut server = probes.server().spawn();
    let result = probe(&mut server, &probes, "workspace-write").await;
    assert_probes(&probes, &result, |probe| probe.in_workspace);
    assert_sandbox_warning(&result, "workspace-write");
}

#[tokio::test]
async fn unlimited_is_not_confined() {
    let probes = Probes::new("cam-sandbox-unlimited");
    let mut server = probes.server().spawn();
    let result = probe(&mut server, &probes, "unlimited").await;
    assert_probes(&probes, &result, |_| true);
    assert!(!warnings(&result).contains("Landlock"), "{result:#}");
}

#[tokio::test]
async fn sandbox_off_lets_workspace_write_write_anywhere() {
    let probes = Probes::new("cam-sandbox-off");
    let mut server = probes.server().arg("--sandbox").arg("off").spawn();
    let result = probe(&mut server, &probes, "workspace-write").await;
    assert_probes(&probes, &result, |_| true);
    assert!(!warnings(&result).contains("Landlock"), "{result:#}");
}

#[tokio::test]
async fn the_runs_private_tmpdir_is_gone_after_the_run() {
    if landlock_missing() {
        return;
    }
    let probes = Probes::new("cam-sandbox-tmpdir");
    let mut server = probes.server().spawn();
    probe(&mut server, &probes, "read-only").await;
    let tmpdir = probes.cli_tmpdir().expect("the CLI's TMPDIR");
    assert!(
        tmpdir.starts_with(probes.server_tmp())
            && tmpdir
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("cam-run-")),
        "{}",
        tmpdir.display()
    );
    common::wait_until("the run's TMPDIR is removed", || !tmpdir.exists()).await;
}

/// A server with `[agents.keeper]` on codex, whose own writable directory is `writable`.
fn keeper(probes: &Probes, writable: &Path) -> Server {
    let config = probes.root.path().join("config.toml");
    let text = format!(
        "[agents.keeper]\nbase = \"codex\"\nwritable = [\"{}\"]\n",
        writable.display()
    );
    std::fs::write(&config, text).expect("config");
    probes.server().arg("--config").arg(&config).spawn()
}

#[tokio::test]
async fn a_custom_agents_writable_directory_is_writable_under_workspace_write() {
    if landlock_missing() {
        return;
    }
    let probes = Probes::new("cam-sandbox-writable");
    let extra = probes.root.path().join("extra");
    std::fs::create_dir_all(&extra).expect("extra dir");
    let (allowed, refused) = (
        extra.join("kept.txt"),
        probes.root.path().join("outside/not.txt"),
    );
    let mut server = keeper(&probes, &extra);
    server.initialize().await;
    let prompt = format!(
        "write-probe={},{} probe-log={} answer=probed",
        allowed.display(),
        refused.display(),
        probes.log().display()
    );
    let arguments = json!({"prompt": prompt, "workspace": probes.workspace(),
                           "permission": "workspace-write"});
    let result = server.call("keeper", arguments).await;
    assert_eq!(
        result["structuredContent"]["status"], "completed",
        "{result:#}"
    );
    let results = probes.results();
    assert!(
        results.contains(&format!("{}: ok", allowed.display())),
        "{results}"
    );
    assert!(allowed.exists(), "{results}");
    let denied = format!("{}: Permission denied (EACCES)", refused.display());
    assert!(results.contains(&denied), "{results}");
    assert!(!refused.exists());
}

#[tokio::test]
async fn a_custom_agents_writable_directory_outside_the_allowed_roots_is_refused() {
    let probes = Probes::new("cam-sandbox-writable-outside");
    let mut server = keeper(&probes, Path::new("/usr"));
    server.initialize().await;
    let arguments = json!({"prompt": "answer=never", "workspace": probes.workspace(),
                           "permission": "workspace-write"});
    let result = server.call("keeper", arguments).await;
    assert!(is_error(&result), "{result:#}");
    let text = all_text(&result);
    assert!(
        text.contains("writable directory") && text.contains("/usr"),
        "{text}"
    );
}
