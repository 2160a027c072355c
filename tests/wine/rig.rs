//! One test's setting: a directory of its own (the CLI, the workspace, the job store and an
//! empty config), the Windows server started in it under Wine, and the process table read from
//! Linux for what its runs left.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cli_agent_engine::platform;
use serde_json::Value;
use tempfile::TempDir;

use crate::common;
use crate::mcp::{self, Server};

/// The server's `.exe`, the fake CLI's `.exe` and the runner (module docs of main.rs).
const SERVER_VAR: &str = "CAM_WINE_SERVER_EXE";
const FAKE_CLI_VAR: &str = "CAM_WINE_FAKE_CLI_EXE";
const RUNNER_VAR: &str = "CAM_WINE_RUNNER";
const PREFIX_VAR: &str = "WINEPREFIX";

/// How long a run's processes may take to go, on a loaded 2-core machine under Wine.
const GONE_WITHIN: Duration = Duration::from_secs(30);

/// The processes of one run's tree that carry its name: the fake CLI (the leader) and its six
/// descendants (tests/fake-cli-windows/src/tree.rs; the breakaway attempt is refused).
pub const TREE: usize = 7;

/// What the Wine tests run, from the environment.
pub struct Wine {
    server_exe: PathBuf,
    pub fake_cli_exe: PathBuf,
    runner: PathBuf,
    prefix: PathBuf,
}

impl Wine {
    /// The settings, or `None` when one is missing: the test skips (and fails under
    /// `CAM_TEST_REQUIRE_ALL=1`).
    pub fn from_env() -> Option<Self> {
        let get = |name: &str| std::env::var_os(name).map(PathBuf::from);
        let found = (
            get(SERVER_VAR),
            get(FAKE_CLI_VAR),
            get(RUNNER_VAR),
            get(PREFIX_VAR),
        );
        if let (Some(server_exe), Some(fake_cli_exe), Some(runner), Some(prefix)) = found {
            for path in [&server_exe, &fake_cli_exe, &runner, &prefix] {
                assert!(path.exists(), "{} does not exist", path.display());
            }
            return Some(Self {
                server_exe,
                fake_cli_exe,
                runner,
                prefix,
            });
        }
        common::skip_unless_required(&format!(
            "the Wine tier needs {SERVER_VAR}, {FAKE_CLI_VAR}, {RUNNER_VAR} and {PREFIX_VAR} \
             (scripts/check-windows wine sets them)"
        ));
        None
    }
}

/// `path` as a Windows program under Wine names it: Wine's `Z:` drive is `/`.
pub fn win_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// One test's directory, whose unique name is on every command line of its runs' processes.
pub struct Rig {
    pub wine: Wine,
    dir: TempDir,
    /// The directory's name.
    pub name: String,
}

impl Rig {
    /// A fresh directory named after `test`, with `state/`, an empty `config.toml` and the
    /// fake CLI copied to `bin/codex.exe`.
    pub fn new(wine: Wine, test: &str) -> Self {
        let dir = common::temp_dir(&format!("cam-wine-{test}"));
        let name = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        std::fs::write(dir.path().join("config.toml"), "").unwrap();
        let rig = Self { wine, dir, name };
        rig.copy_fake_cli(&rig.path().join("bin/codex.exe"));
        rig
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The fake CLI copied to `to` (its directory made).
    pub fn copy_fake_cli(&self, to: &Path) {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&self.wine.fake_cli_exe, to).unwrap();
    }

    /// A directory `relative` in the rig, made.
    pub fn dir(&self, relative: &str) -> PathBuf {
        let dir = self.path().join(relative);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The Windows server under Wine with codex at `cli`, started in `workspace` (every call's
    /// default), initialized. Its job store, config and allowed root are the rig's; no other
    /// CLI is configured; a call is never handed off as a job.
    pub async fn server(&self, cli: &Path, workspace: &Path) -> Server {
        let mut builder = Server::bare_program(&self.wine.runner)
            .arg(&self.wine.server_exe)
            .arg("serve");
        for agent in mcp::agents() {
            builder = builder.env_remove(&mcp::bin_env_var(agent));
        }
        let mut server = builder
            .env("CAM_CODEX_BIN", win_path(cli))
            .env("CAM_STATE_DIR", win_path(&self.path().join("state")))
            .env("CAM_CONFIG", win_path(&self.path().join("config.toml")))
            .env("CAM_ALLOWED_ROOTS", win_path(self.path()))
            .env("CAM_HANDOFF_SECS", "0")
            .env(SECRET_VAR, "not for the CLI")
            .env(PREFIX_VAR, &self.wine.prefix)
            .env("WINEDEBUG", "-all")
            .cwd(workspace)
            .spawn();
        server.initialize().await;
        server
    }

    /// The live processes of this rig's runs: pid and command line.
    pub fn processes(&self) -> Vec<(u32, String)> {
        processes_with(&self.name)
    }

    /// Waits until at least `count` processes of this rig's runs are up.
    pub async fn wait_for_processes(&self, count: usize) -> Vec<(u32, String)> {
        let start = Instant::now();
        loop {
            let found = self.processes();
            if found.len() >= count {
                return found;
            }
            assert!(
                start.elapsed() < GONE_WITHIN,
                "{count} processes of the rig's runs never ran; found {found:#?}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Waits until no process of this rig's runs (nor of `markers`) is left; how long that took.
    pub async fn wait_gone(&self, markers: &[String]) -> Duration {
        let start = Instant::now();
        loop {
            let mut left = self.processes();
            for marker in markers {
                left.extend(processes_with(&format!("CAM_RUN_ID={marker}")));
            }
            if left.is_empty() {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < GONE_WITHIN,
                "left after {GONE_WITHIN:?}: {left:#?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Live processes (zombies are dead) whose command line holds `needle`, as `pgrep -f` finds
/// them: a Wine process shows its Windows command line.
pub fn processes_with(needle: &str) -> Vec<(u32, String)> {
    platform::process_ids()
        .into_iter()
        .filter(|&pid| pid != std::process::id())
        .filter_map(|pid| Some((pid, platform::arguments(pid)?.join(" "))))
        .filter(|(pid, line)| line.contains(needle) && platform::is_alive(*pid))
        .collect()
}

/// The run markers on these processes' command lines (`CAM_RUN_ID=<marker>`), each once.
pub fn markers(processes: &[(u32, String)]) -> Vec<String> {
    let mut found: Vec<String> = processes
        .iter()
        .flat_map(|(_, line)| line.split_whitespace())
        .filter_map(|word| word.strip_prefix("CAM_RUN_ID="))
        .filter(|marker| !marker.is_empty())
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// What the fake CLI received, from a completed call's answer (tests/fake-cli-windows/src/echo.rs).
pub fn received(result: &Value) -> Value {
    assert_eq!(mcp::structured(result)["status"], "completed", "{result:#}");
    let answer = mcp::texts(result).into_iter().next().unwrap_or_default();
    serde_json::from_str(&answer)
        .unwrap_or_else(|e| panic!("the answer is no JSON ({e}): {answer}"))
}

/// A secret in the server's environment that no CLI may get (the engine's environment module).
pub const SECRET_VAR: &str = "GITHUB_TOKEN";

/// The CLI got what a Windows program needs to run (whatever case Windows wrote the names in)
/// and not the server's other variables.
pub fn assert_windows_environment(seen: &Value) {
    let names: Vec<String> = seen["env_names"]
        .as_array()
        .expect("env_names")
        .iter()
        .map(|name| name.as_str().unwrap().to_ascii_uppercase())
        .collect();
    for needed in [
        "PATH",
        "SYSTEMROOT",
        "COMSPEC",
        "PATHEXT",
        "TEMP",
        "USERPROFILE",
        "APPDATA",
    ] {
        assert!(
            names.iter().any(|name| name == needed),
            "{needed}: {names:?}"
        );
    }
    assert!(!names.iter().any(|name| name == SECRET_VAR), "{names:?}");
}

/// Prints a figure for the run's log (scripts/check-windows shows it).
pub fn figure(what: &str, took: Duration) {
    eprintln!("figure: {what}: {} ms", took.as_millis());
}
