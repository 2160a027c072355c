//! The real CLIs (installed by `scripts/install-clis.sh`) against the mock model server
//! (`tests/fixtures/mock-model`): each CLI gets a sandbox of its own, a home, a workspace and a
//! config that points it at the mock, and never sees a user's real configuration.
#![allow(dead_code)]

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use cli_agent_engine::{
    Agent, AgentEvent, Engine, EngineConfig, Outcome, Permission, RunRequest, clis,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::common::{TempDir, assert_none_with_env, pids_with_env, unique};

pub const INSTALL_SCRIPT: &str = "scripts/install-clis.sh";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The installed CLI. When it is missing a local run skips (with a message naming the
/// install script) and CI, which sets `CAM_TEST_REQUIRE_ALL=1`, fails.
pub fn installed(agent: Agent) -> Option<PathBuf> {
    let bin = repo()
        .join(".cli-agents/node_modules/.bin")
        .join(agent.name());
    if bin.exists() {
        return Some(bin);
    }
    let message = format!("{agent} is not installed in .cli-agents/: run {INSTALL_SCRIPT}");
    assert!(
        std::env::var_os("CAM_TEST_REQUIRE_ALL").is_none_or(|v| v != "1"),
        "{message}"
    );
    eprintln!("skipped: {message}");
    None
}

/// The mock model server: one loopback port for all four wire protocols, a log of every
/// request it received. It exits when its stdin closes, so it cannot outlive the test.
pub struct MockModel {
    child: Child,
    _stdin: ChildStdin,
    pub port: u16,
    log: PathBuf,
    _dir: TempDir,
}

impl MockModel {
    pub fn start() -> Self {
        let dir = TempDir::new("mock-model");
        let log = dir.path().join("requests.jsonl");
        let mut child = Command::new("python3")
            .arg(repo().join("tests/fixtures/mock-model/mock_model.py"))
            .args(["--port", "0", "--log"])
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(dir.path().join("stderr")).expect("mock stderr file"))
            .spawn()
            .expect("start the mock model server (python3)");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut first)
            .expect("the mock prints its port");
        let port = first
            .trim()
            .strip_prefix("PORT ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the mock printed {first:?}, not `PORT <n>`"));
        let stdin = child.stdin.take().expect("piped stdin");
        Self {
            child,
            _stdin: stdin,
            port,
            log,
            _dir: dir,
        }
    }

    /// Every request logged so far, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Logged model requests of `agent`'s protocol whose prompt mentions `needle`.
    pub fn requests_with(&self, agent: Agent, needle: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|request| request["protocol"] == agent.name())
            .filter(|request| {
                request["prompt"]
                    .as_str()
                    .is_some_and(|p| p.contains(needle))
            })
            .collect()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port on which nothing listens: a refused connection.
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// How a sandbox configures the CLI's own retries of failed model requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retries {
    /// The settings the README recommends for fast failures.
    Shortened,
    /// The CLI's defaults (codex retries a refused connection forever).
    Defaults,
}

/// One CLI's isolated world: a home, state dirs, a temp dir and a workspace under one
/// directory, and a wrapper script that sets the environment and `exec`s the real CLI, so
/// the engine, `run` and the server all drive the CLI exactly as a user's would.
pub struct Sandbox {
    pub agent: Agent,
    pub workspace: PathBuf,
    pub wrapper: PathBuf,
    /// `CAM_TEST_TAG=<unique>`, inherited by every process the CLI starts.
    pub tag: String,
    dir: TempDir,
}

impl Sandbox {
    pub fn new(agent: Agent, real_bin: &Path, port: u16, retries: Retries) -> Self {
        let dir = TempDir::new(&format!("real-{agent}"));
        let root = dir.path().to_path_buf();
        for sub in [
            "bin",
            "home",
            "tmp",
            "workspace",
            "config",
            "data",
            "cache",
            "state",
        ] {
            std::fs::create_dir_all(root.join(sub)).expect("sandbox dirs");
        }
        let tag = format!("CAM_TEST_TAG={}", unique("real"));
        let mut env = vec![
            ("HOME".to_owned(), path(&root.join("home"))),
            ("TMPDIR".to_owned(), path(&root.join("tmp"))),
            ("XDG_CONFIG_HOME".to_owned(), path(&root.join("config"))),
            ("XDG_DATA_HOME".to_owned(), path(&root.join("data"))),
            ("XDG_CACHE_HOME".to_owned(), path(&root.join("cache"))),
            ("XDG_STATE_HOME".to_owned(), path(&root.join("state"))),
        ];
        env.extend(configure(agent, &root, port, retries));
        let wrapper = root.join("bin").join(agent.name());
        write_wrapper(&wrapper, real_bin, &tag, &env);
        Self {
            agent,
            workspace: root.join("workspace"),
            wrapper,
            tag,
            dir,
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// An engine that runs this sandbox's CLI.
    pub fn engine(&self) -> Engine {
        Engine::new(EngineConfig {
            binaries: [(self.agent.name().to_owned(), self.wrapper.clone())]
                .into_iter()
                .collect(),
            ..EngineConfig::default()
        })
    }

    /// A request for this sandbox's CLI, bounded by [`RUN_DEADLINE`]: a CLI that hangs
    /// comes back `timed_out` instead of holding the test for the engine's default 30 min.
    pub fn request(&self, prompt: &str) -> RunRequest {
        let mut request = RunRequest::new(self.agent, prompt, &self.workspace);
        request.timeout = Some(RUN_DEADLINE);
        request
    }

    /// Processes this sandbox's CLI started that are still alive.
    pub fn survivors(&self) -> Vec<i32> {
        pids_with_env(&self.tag)
    }

    /// Whether a process of this sandbox's CLI runs a command line starting with `argv`
    /// (NUL-separated, as in `/proc/<pid>/cmdline`).
    pub fn runs(&self, argv: &[u8]) -> bool {
        self.survivors().into_iter().any(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.starts_with(argv))
        })
    }

    /// Assert that none of the processes this sandbox's CLI started is alive.
    pub fn assert_nothing_left(&self) {
        assert_none_with_env(&self.tag);
    }
}

fn path(path: &Path) -> String {
    path.to_str().expect("UTF-8 temp path").to_owned()
}

fn write_wrapper(wrapper: &Path, real_bin: &Path, tag: &str, env: &[(String, String)]) {
    use std::os::unix::fs::PermissionsExt;
    let mut script = String::from("#!/bin/sh\n");
    for (key, value) in env.iter().map(|(k, v)| (k.as_str(), v.as_str())) {
        script.push_str(&format!("export {key}='{value}'\n"));
    }
    script.push_str(&format!("export {tag}\nexec '{}' \"$@\"\n", path(real_bin)));
    std::fs::write(wrapper, script).expect("write the wrapper");
    std::fs::set_permissions(wrapper, std::fs::Permissions::from_mode(0o755))
        .expect("make the wrapper executable");
}

/// Write `agent`'s config under `root` and return the environment that points it at the mock.
fn configure(agent: Agent, root: &Path, port: u16, retries: Retries) -> Vec<(String, String)> {
    let base = format!("http://127.0.0.1:{port}");
    let home = |dir: &str| path(&root.join(dir));
    let mut env = match agent.name() {
        "codex" => {
            write(root, "codex/config.toml", &codex_config(port, retries));
            vec![
                ("CODEX_HOME", home("codex")),
                ("FAKE_API_KEY", "sk-fake".into()),
            ]
        }
        "claude" => vec![
            ("ANTHROPIC_BASE_URL", base),
            ("ANTHROPIC_API_KEY", "sk-ant-fake".into()),
            ("CLAUDE_CONFIG_DIR", home("claude")),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_NON_ESSENTIAL_MODEL_CALLS", "1".into()),
        ],
        "gemini" => {
            let settings = gemini_settings(retries);
            write(root, "gemini/.gemini/settings.json", &settings);
            vec![
                ("GOOGLE_GEMINI_BASE_URL", base),
                ("GEMINI_API_KEY", "fake-gemini-key".into()),
                ("GEMINI_CLI_HOME", home("gemini")),
                ("GEMINI_TELEMETRY_ENABLED", "false".into()),
                ("GEMINI_SANDBOX", "false".into()),
            ]
        }
        "opencode" => {
            write(root, "opencode.json", &opencode_config(port));
            vec![
                ("OPENCODE_CONFIG", home("opencode.json")),
                ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
                ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
                ("OPENCODE_DISABLE_SHARE", "1".into()),
                ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into()),
                ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
            ]
        }
        "qwen" => {
            write(root, "qwen/settings.json", &qwen_settings(retries));
            vec![
                ("QWEN_HOME", home("qwen")),
                ("OPENAI_BASE_URL", format!("{base}/qwen/v1")),
                ("OPENAI_API_KEY", "sk-fake".into()),
                ("OPENAI_MODEL", "fake-model".into()),
            ]
        }
        // BYOK: with its own provider copilot needs no GitHub sign-in; offline, it asks
        // nothing of GitHub either.
        "copilot" => vec![
            ("COPILOT_HOME", home("copilot")),
            ("COPILOT_OFFLINE", "true".into()),
            ("COPILOT_AUTO_UPDATE", "false".into()),
            ("COPILOT_PROVIDER_BASE_URL", format!("{base}/copilot/v1")),
            ("COPILOT_PROVIDER_API_KEY", "sk-fake".into()),
            ("COPILOT_MODEL", "gpt-5.4".into()),
        ],
        other => panic!("{other} is not configured for the mock model here"),
    };
    if agent == clis::CLAUDE && retries == Retries::Shortened {
        env.push(("CLAUDE_CODE_MAX_RETRIES", "0".into()));
    }
    env.into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
}

fn write(root: &Path, relative: &str, contents: &str) {
    let file = root.join(relative);
    std::fs::create_dir_all(file.parent().expect("a parent dir")).expect("config dir");
    std::fs::write(file, contents).expect("write config");
}

fn codex_config(port: u16, retries: Retries) -> String {
    let mut config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\n\
         name = \"Fake\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\
         env_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\nstream_idle_timeout_ms = 60000\n"
    );
    if retries == Retries::Shortened {
        config.push_str(
            "request_max_retries = 0\nstream_max_retries = 0\n\n\
             [features]\nunbounded_connection_retries = false\n",
        );
    }
    config
}

fn gemini_settings(retries: Retries) -> String {
    let mut general = serde_json::json!({
        "enableAutoUpdate": false,
        "enableAutoUpdateNotification": false,
    });
    if retries == Retries::Shortened {
        general["maxAttempts"] = 1.into();
        general["retryFetchErrors"] = false.into();
    }
    serde_json::json!({
        "security": {
            "auth": { "selectedType": "gemini-api-key" },
            "folderTrust": { "enabled": false },
        },
        "general": general,
        "privacy": { "usageStatisticsEnabled": false },
        "telemetry": { "enabled": false },
    })
    .to_string()
}

/// qwen's settings: the OpenAI-compatible provider from the environment, and no memory
/// extraction (a second model request after every turn).
fn qwen_settings(retries: Retries) -> String {
    let mut settings = serde_json::json!({
        "security": { "auth": { "selectedType": "openai" } },
        "general": { "enableAutoUpdate": false },
        "memory": { "enableManagedAutoMemory": false },
        "privacy": { "usageStatisticsEnabled": false },
        "telemetry": { "enabled": false },
    });
    if retries == Retries::Shortened {
        // Its own retries of 5xx (7 attempts) are fixed; this stops the SDK's under them.
        settings["model"] = serde_json::json!({ "generationConfig": { "maxRetries": 0 } });
    }
    settings.to_string()
}

fn opencode_config(port: u16) -> String {
    serde_json::json!({
        "$schema": "https://opencode.ai/config.json",
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "autoupdate": false,
        "share": "disabled",
        "provider": { "fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": { "baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "sk-fake" },
            "models": { "fake-model": { "name": "Fake Model", "tool_call": true, "reasoning": true } },
        } },
    })
    .to_string()
}

/// Run `request` through a fresh engine of `sandbox`, collecting the events it reports.
pub async fn run(
    sandbox: &Sandbox,
    request: RunRequest,
    cancel: CancellationToken,
) -> (Outcome, Vec<AgentEvent>) {
    run_on(&sandbox.engine(), request, cancel).await
}

/// [`run`] on `engine`, which remembers the sessions of its earlier runs.
pub async fn run_on(
    engine: &Engine,
    request: RunRequest,
    cancel: CancellationToken,
) -> (Outcome, Vec<AgentEvent>) {
    crate::common::become_subreaper();
    let mut events = Vec::new();
    let outcome = engine
        .run(request, cancel, &mut |batch: &[AgentEvent]| {
            events.extend_from_slice(batch)
        })
        .await
        .expect("the run starts");
    (outcome, events)
}

/// Generous bound for one real-CLI run on a loaded 2-core machine; opencode's fixed retries
/// of a refused connection take about 70 s of it.
/// The permission under which each CLI offers its shell tool to the model without asking.
/// claude's `unlimited` needs `IS_SANDBOX=1` as root, which the engine checks in its own
/// environment; `workspace-write` pre-approves Bash just as well.
pub fn shell_permission(agent: Agent) -> Permission {
    match agent.name() {
        "claude" => Permission::WorkspaceWrite,
        _ => Permission::Unlimited,
    }
}

/// A prompt whose shell call sleeps `secs` seconds. qwen refuses a bare `sleep` ("run
/// blocking commands in the background") unless a comment says the wait is meant.
pub fn sleep_prompt(agent: Agent, secs: u32) -> String {
    match agent.name() {
        "qwen" => format!("RUN_SHELL: sleep {secs} # intentional-sleep: the test cancels it"),
        _ => format!("RUN_SHELL: sleep {secs}"),
    }
}

pub const RUN_DEADLINE: Duration = Duration::from_secs(180);

/// The name a host CLI knows our server by: its model sees the tools as `mcp__cam__<tool>`.
pub const MCP_SERVER: &str = "cam";

/// A sandbox's CLI as an MCP host: `cli-agent-mcp serve` configured as its MCP server
/// [`MCP_SERVER`] with `server_env`, every tool of it allowed without asking (headless runs
/// have nobody to ask), and the host's own limits generous enough for a loaded machine.
impl Sandbox {
    pub fn add_our_server(&self, server_env: &[(&str, String)]) {
        let env: serde_json::Map<String, Value> = server_env
            .iter()
            .map(|(key, value)| ((*key).to_owned(), Value::from(value.as_str())))
            .collect();
        let command = env!("CARGO_BIN_EXE_cli-agent-mcp");
        match self.agent.name() {
            // codex defers MCP tools behind tool_search; `approve` pre-approves every tool
            // (else `exec`, whose approval policy is `never`, refuses the call).
            "codex" => {
                let mut table = format!(
                    "\n[mcp_servers.{MCP_SERVER}]\ncommand = {}\nargs = [\"serve\"]\n\
                     startup_timeout_sec = 60\ntool_timeout_sec = 120\n\
                     default_tools_approval_mode = \"approve\"\n\n[mcp_servers.{MCP_SERVER}.env]\n",
                    Value::from(command)
                );
                for (key, value) in &env {
                    table.push_str(&format!("{key} = {value}\n"));
                }
                let config = self.root().join("codex/config.toml");
                let mut toml = std::fs::read_to_string(&config).expect("the codex config");
                toml.push_str(&table);
                std::fs::write(config, toml).expect("write the codex config");
            }
            "claude" => {
                let servers = serde_json::json!({ "mcpServers": { MCP_SERVER: {
                    "type": "stdio", "command": command, "args": ["serve"], "env": env,
                } } });
                write(self.root(), "mcp.json", &servers.to_string());
            }
            other => panic!("{other} is not set up as an MCP host"),
        }
    }

    /// One headless turn of this sandbox's host CLI on `prompt`, printing JSONL, in its
    /// workspace, with none of the test process's own `CAM_*` settings.
    pub fn host_turn(&self, prompt: &str) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.wrapper);
        match self.agent.name() {
            "codex" => command.args(["exec", "--json", "--skip-git-repo-check", prompt]),
            "claude" => command
                .args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
                .arg("--mcp-config")
                .arg(self.root().join("mcp.json"))
                .arg("--strict-mcp-config")
                .arg(format!("--allowedTools=mcp__{MCP_SERVER}")),
            other => panic!("{other} is not set up as an MCP host"),
        };
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("CAM_") {
                command.env_remove(key);
            }
        }
        command
            .current_dir(&self.workspace)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    }
}
