//! Tools only for the CLIs a server can run: one given a path, a custom agent, or one found on
//! the server's PATH (a PATH the test controls, and no login shell). A CLI installed while the
//! server runs is offered within seconds, announced with `notifications/tools/list_changed`;
//! the instructions name the missing ones with how to install them, and a call to one still
//! fails with that hint. The built binary, the fake CLI, homes in temp dirs.

use crate::common;
use crate::mcp;

use std::path::PathBuf;

use common::{temp_dir, unique};
use mcp::{JOB_TOOLS, Server, agents, all_text, bin_env_var, is_error, structured};
use serde_json::{Value, json};
use tempfile::TempDir;

/// A server whose every CLI is a binary name found nowhere (so none is offered, whatever this
/// machine has installed), on a PATH of `bin` and the system dirs, with no login shell.
struct Absent {
    bin: TempDir,
    /// Each CLI's binary name, unique to this test.
    names: Vec<(&'static str, String)>,
}

impl Absent {
    fn new() -> Self {
        let names = agents()
            .into_iter()
            .map(|agent| (agent, unique(&format!("cam-absent-{agent}"))))
            .collect();
        Self {
            bin: temp_dir("cam-offered-bin"),
            names,
        }
    }

    fn name(&self, agent: &str) -> &str {
        let (_, name) = self.names.iter().find(|(a, _)| *a == agent).expect("a CLI");
        name
    }

    fn builder(&self) -> mcp::Builder {
        let path = format!("{}:/usr/bin:/bin", self.bin.path().display());
        let mut builder = Server::builder()
            .env("PATH", path)
            .env("CAM_NO_LOGIN_SHELL", "1");
        for (agent, name) in &self.names {
            builder = builder.env(&bin_env_var(agent), name);
        }
        builder
    }

    /// Put the fake CLI on the server's PATH under `agent`'s binary name.
    fn install(&self, agent: &str) -> PathBuf {
        let path = self.bin.path().join(self.name(agent));
        std::os::unix::fs::symlink(common::fake_cli(agent), &path).expect("link the fake");
        path
    }
}

fn agent_tools(names: &[String]) -> Vec<&str> {
    names
        .iter()
        .map(String::as_str)
        .filter(|name| !JOB_TOOLS.contains(name))
        .collect()
}

fn is_tools_list_changed(message: &Value) -> bool {
    message["method"] == "notifications/tools/list_changed"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_installed_while_the_server_runs_is_offered_and_announced() {
    let absent = Absent::new();
    let claude = common::fake_cli("claude");
    let mut server = absent
        .builder()
        .env(&bin_env_var("claude"), &claude)
        .env("FAKE_CLI_DIALECT", "gemini")
        .spawn();
    let init = server.initialize().await;
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true, "{init}");
    let instructions = init["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("fresh conversation"),
        "{instructions}"
    );
    for missing in ["codex", "gemini", "copilot"] {
        assert!(
            instructions.contains(&format!("{missing} (`npm install -g ")),
            "{instructions}"
        );
    }
    let listed = server.tool_names().await;
    assert_eq!(agent_tools(&listed), ["claude"]);
    assert_eq!(listed.len(), 1 + JOB_TOOLS.len(), "{listed:?}");

    // A call to a CLI not installed fails with how to install it.
    let refused = server.call("gemini", json!({"prompt": "hi"})).await;
    assert!(is_error(&refused), "{refused:#}");
    let text = all_text(&refused);
    assert!(
        text.contains("npm install -g @google/gemini-cli") && text.contains("CAM_GEMINI_BIN"),
        "{text}"
    );

    absent.install("gemini");
    server
        .wait_for("notifications/tools/list_changed", |messages| {
            messages.iter().find(|m| is_tools_list_changed(m)).cloned()
        })
        .await;
    let listed = server.tool_names().await;
    assert_eq!(
        agent_tools(&listed),
        ["claude", "gemini"],
        "in the registry's order"
    );
    let answered = server.call("gemini", json!({"prompt": "hi"})).await;
    assert!(!is_error(&answered), "{answered:#}");
    assert_eq!(structured(&answered)["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_bin_argument_and_a_custom_agent_are_offered() {
    let absent = Absent::new();
    let dir = temp_dir("cam-offered-config");
    let config = dir.path().join("config.toml");
    // The reviewer's own CLI, claude, is found nowhere: a custom agent is offered anyway.
    std::fs::write(&config, "[agents.reviewer]\nbase = \"claude\"\n").expect("config");
    let mut server = absent
        .builder()
        .env("CAM_CONFIG", &config)
        .arg("--codex-bin")
        .arg(common::fake_cli("codex"))
        .spawn();
    let init = server.initialize().await;
    let listed = server.tool_names().await;
    assert_eq!(agent_tools(&listed), ["codex", "reviewer"], "{init}");
    let instructions = init["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("claude (`npm install -g "),
        "{instructions}"
    );
    assert!(!instructions.contains("codex (`npm"), "{instructions}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enable_restricts_what_is_installed_and_names_no_cli_outside_it() {
    let absent = Absent::new();
    absent.install("qwen");
    absent.install("opencode");
    let mut server = absent.builder().env("CAM_ENABLE", "qwen,gemini").spawn();
    let init = server.initialize().await;
    assert_eq!(agent_tools(&server.tool_names().await), ["qwen"]);
    let instructions = init["instructions"].as_str().unwrap_or_default();
    assert!(instructions.contains("gemini (`npm"), "{instructions}");
    assert!(!instructions.contains("opencode"), "{instructions}");
}

/// A CLI of a bare `bin` name is searched on PATH as doctor searches it: doctor and the tool list
/// agree on what is installed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_and_the_tool_list_agree() {
    let absent = Absent::new();
    absent.install("copilot");
    let mut server = absent.builder().spawn();
    server.initialize().await;
    let listed = server.tool_names().await;
    let doctor = doctor_json(&absent);
    let usable: Vec<&str> = doctor["clis"]
        .as_array()
        .expect("clis")
        .iter()
        .filter(|cli| cli["state"] != "missing")
        .filter_map(|cli| cli["agent"].as_str())
        .collect();
    assert_eq!(agent_tools(&listed), usable, "{doctor:#}");
    assert_eq!(usable, ["copilot"]);
}

fn doctor_json(absent: &Absent) -> Value {
    let path = format!("{}:/usr/bin:/bin", absent.bin.path().display());
    let mut command = common::cam_command();
    command
        .args(["doctor", "--json"])
        .env("PATH", path)
        .env("CAM_NO_LOGIN_SHELL", "1");
    for (agent, name) in &absent.names {
        command.env(bin_env_var(agent), name);
    }
    let output = command.output().expect("run doctor");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "doctor --json: {error}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A 2026-07-28 client has no session to be told in: it hears of new tools on a
/// `subscriptions/listen` stream that asked for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_listen_stream_that_asked_hears_the_tools_change() {
    let absent = Absent::new();
    let mut server = absent.builder().spawn();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": mcp::MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    });
    let listen = json!({"_meta": meta, "notifications": {"toolsListChanged": true}});
    server.request("subscriptions/listen", listen).await;
    let id = server.request("tools/list", json!({"_meta": meta})).await;
    let listed = server.result(id).await;
    assert_eq!(
        listed["tools"].as_array().map(Vec::len),
        Some(JOB_TOOLS.len())
    );
    absent.install("opencode");
    server
        .wait_for("notifications/tools/list_changed", |messages| {
            messages.iter().find(|m| is_tools_list_changed(m)).cloned()
        })
        .await;
    let id = server.request("tools/list", json!({"_meta": meta})).await;
    let listed = server.result(id).await;
    assert_eq!(listed["tools"][0]["name"], "opencode", "{listed}");
}
