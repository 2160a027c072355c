//! A host started from a desktop gives the server a bare PATH: the CLIs are found where people
//! install them (nvm's newest node, `~/.local/bin`, the login shell's PATH, …), `doctor` and
//! the run's log say where, a call runs the CLI found, and a CLI found nowhere is an error that
//! lists the places looked. The built binary, a temp home, the fake CLI.

use crate::common;
use crate::mcp;

use std::path::{Path, PathBuf};
use std::process::Output;

use cli_agent_engine::locate::INSTALL_DIRS;
use cli_agent_engine::{Agent, clis};
use common::temp_dir;
use mcp::{Server, all_text, is_error, structured, texts};
use serde_json::{Value, json};
use tempfile::TempDir;

/// What a desktop host gives its servers.
const BARE_PATH: &str = "/usr/bin:/bin";

fn fake_cli() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-cli")
}

/// `relative` under `home`, a link to the fake CLI (which speaks the dialect of its name).
fn install(home: &Path, relative: &str) -> PathBuf {
    let path = home.join(relative);
    std::fs::create_dir_all(path.parent().expect("a dir")).expect("create dirs");
    std::os::unix::fs::symlink(fake_cli(), &path).expect("link the fake CLI");
    path
}

/// A home as nvm and claude's installer leave it: codex under two node versions, claude in
/// `~/.local/bin`.
fn desktop_home() -> TempDir {
    let home = temp_dir("cam-discovery-home");
    install(home.path(), ".nvm/versions/node/v18.0.0/bin/codex");
    install(home.path(), ".nvm/versions/node/v22.11.0/bin/codex");
    install(home.path(), ".local/bin/claude");
    home
}

/// A built-in CLI that [`desktop_home`] lacks and none of the absolute dirs searched holds on
/// this machine, so a test that needs one missing is deterministic; `None` (skipped) when
/// every such one is installed.
fn absent_cli() -> Option<Agent> {
    let absolute = INSTALL_DIRS.iter().filter(|dir| dir.starts_with('/'));
    let dirs: Vec<&str> = absolute.copied().chain(BARE_PATH.split(':')).collect();
    let absent = clis::builtin_agents()
        .filter(|agent| ![clis::CODEX, clis::CLAUDE].contains(agent))
        .find(|agent| {
            dirs.iter()
                .all(|dir| !Path::new(dir).join(agent.cli().binary()).exists())
        });
    if absent.is_none() {
        common::skip_unless_required("every CLI is installed in a system dir");
    }
    absent
}

/// `doctor` (with `args`) under a bare PATH, `home`, no CLI configured and `env`.
fn doctor(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = common::cam_command();
    command
        .arg("doctor")
        .args(args)
        .env("PATH", BARE_PATH)
        .env("HOME", home);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run doctor")
}

/// `doctor --json`'s report of each CLI, by name.
fn doctor_json(home: &Path, env: &[(&str, &str)]) -> impl Fn(Agent) -> Value {
    let output = doctor(home, &["--json"], env);
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("no JSON report ({error}): {output:?}"));
    move |agent| {
        report["clis"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|cli| cli["agent"] == agent.name())
            .cloned()
            .unwrap_or_else(|| panic!("no report of {agent}: {report:#}"))
    }
}

const NO_LOGIN_SHELL: (&str, &str) = ("CAM_NO_LOGIN_SHELL", "1");

#[test]
fn doctor_finds_clis_where_installers_put_them_and_says_where() {
    let home = desktop_home();
    let report = doctor_json(home.path(), &[NO_LOGIN_SHELL]);
    let codex = report(clis::CODEX);
    assert_eq!(codex["state"], "verified", "{codex:#}");
    assert_eq!(
        codex["path"],
        home.path()
            .join(".nvm/versions/node/v22.11.0/bin/codex")
            .display()
            .to_string(),
        "the newest node's wins: {codex:#}"
    );
    assert_eq!(codex["found_by"], "nvm node v22.11.0", "{codex:#}");
    assert_eq!(
        codex["found"],
        "found in ~/.nvm/versions/node/v22.11.0/bin (nvm), not on PATH"
    );
    let claude = report(clis::CLAUDE);
    assert_eq!(claude["state"], "verified", "{claude:#}");
    assert_eq!(claude["found_by"], "~/.local/bin", "{claude:#}");
    assert_eq!(claude["found"], "found in ~/.local/bin, not on PATH");

    let text = doctor(home.path(), &[], &[NO_LOGIN_SHELL]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("found in ~/.nvm/versions/node/v22.11.0/bin (nvm), not on PATH"),
        "{text}"
    );
    assert!(
        text.contains("found in ~/.local/bin, not on PATH"),
        "{text}"
    );
}

#[test]
fn doctor_lists_the_places_looked_for_a_missing_cli() {
    let Some(absent) = absent_cli() else { return };
    let home = desktop_home();
    let report = doctor_json(home.path(), &[NO_LOGIN_SHELL])(absent);
    assert_eq!(report["state"], "missing", "{report:#}");
    let looked: Vec<&str> = report["looked"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for place in [
        "the login shell's PATH (not asked: CAM_NO_LOGIN_SHELL)",
        "~/.nvm/versions/node/*/bin",
        "~/.local/bin",
        "~/.claude/local",
        "/opt/homebrew/bin",
    ] {
        assert!(looked.contains(&place), "{place}: {report:#}");
    }
    let advice = report["advice"].as_str().unwrap_or_default();
    for needle in [
        "is neither on PATH nor where installers put it",
        &absent.env_var("BIN"),
        &format!("npm install -g {}", absent.cli().npm_package()),
    ] {
        assert!(advice.contains(needle), "{needle}: {advice}");
    }

    let text = doctor(home.path(), &[], &[NO_LOGIN_SHELL]);
    let text = String::from_utf8_lossy(&text.stdout);
    let listed = text
        .lines()
        .find(|line| line.starts_with("Looked for the missing ones on PATH and in "))
        .unwrap_or_else(|| panic!("the places are not listed: {text}"));
    for place in [
        "~/.nvm/versions/node/*/bin",
        "~/.volta/bin",
        "/usr/local/bin",
    ] {
        assert!(listed.contains(place), "{place}: {listed}");
    }
}

#[test]
fn the_login_shell_s_path_finds_a_cli_and_can_be_turned_off() {
    let Some(absent) = absent_cli() else { return };
    let home = temp_dir("cam-discovery-shell");
    let binary = absent.cli().binary();
    let found = install(home.path(), &format!("shell-only/bin/{binary}"));
    // A login shell whose rc files put shell-only/bin on PATH, then runs what it is asked.
    let shell = home.path().join("fake-shell");
    let script = format!(
        "#!/bin/sh\nfor last; do :; done\nPATH='{}':/usr/bin:/bin\neval \"$last\"\n",
        home.path().join("shell-only/bin").display()
    );
    std::fs::write(&shell, script).expect("write the fake shell");
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod the fake shell");
    let shell = shell.display().to_string();

    let report = doctor_json(home.path(), &[("SHELL", &shell)])(absent);
    assert_eq!(report["found_by"], "login shell PATH", "{report:#}");
    assert_eq!(report["path"], found.display().to_string(), "{report:#}");
    assert_eq!(report["state"], "verified", "{report:#}");

    let report = doctor_json(home.path(), &[("SHELL", &shell), NO_LOGIN_SHELL])(absent);
    assert_eq!(report["state"], "missing", "{report:#}");
}

/// A server under a bare PATH and `home`, running the CLIs it finds there (none configured
/// but those `keep` names), unconfined so the fake may record what it saw outside the workspace.
async fn desktop_server(home: &Path, keep: &[Agent]) -> Server {
    let mut builder = Server::builder()
        .env("PATH", BARE_PATH)
        .env("HOME", home)
        .env("CAM_SANDBOX", "off")
        .env(NO_LOGIN_SHELL.0, NO_LOGIN_SHELL.1);
    for agent in clis::builtin_agents().filter(|agent| !keep.contains(agent)) {
        builder = builder.env_remove(&agent.env_var("BIN"));
    }
    let mut server = builder.spawn();
    server.initialize().await;
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_runs_the_cli_found_under_nvm_with_its_dir_first_on_path() {
    let home = desktop_home();
    let mut server = desktop_server(home.path(), &[]).await;
    let argv_out = home.path().join("argv.json");
    let prompt = format!("answer=found_under_nvm argv-out={}", argv_out.display());
    let result = server.call("codex", json!({ "prompt": prompt })).await;
    assert!(!is_error(&result), "{result:#}");
    assert_eq!(structured(&result)["status"], "completed", "{result:#}");
    assert_eq!(texts(&result)[0], "found under nvm");

    let seen: Value =
        serde_json::from_slice(&std::fs::read(&argv_out).expect("argv-out")).expect("JSON");
    let nvm_bin = home.path().join(".nvm/versions/node/v22.11.0/bin");
    assert_eq!(
        seen["env"]["PATH"],
        format!("{}:{BARE_PATH}", nvm_bin.display()),
        "its node comes first"
    );
    let stderr = server.stderr();
    let started = stderr
        .lines()
        .find(|line| line.contains("started"))
        .unwrap_or_else(|| panic!("no `started` line: {stderr}"));
    assert!(
        started.contains("found_by=nvm node v22.11.0")
            && started.contains(&nvm_bin.join("codex").display().to_string()),
        "{started}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_a_cli_found_nowhere_lists_the_places_looked() {
    let Some(absent) = absent_cli() else { return };
    let home = desktop_home();
    let mut server = desktop_server(home.path(), &[]).await;
    let result = server.call(absent.name(), json!({ "prompt": "hi" })).await;
    assert!(is_error(&result), "{result:#}");
    let text = all_text(&result);
    for needle in [
        "not found",
        &format!("on PATH ({BARE_PATH})"),
        "the login shell's PATH (not asked: CAM_NO_LOGIN_SHELL)",
        "~/.nvm/versions/node/*/bin",
        "~/.local/bin",
        "~/.opencode/bin",
        "/opt/homebrew/bin",
        &absent.env_var("BIN"),
        &format!("npm install -g {}", absent.cli().npm_package()),
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}
