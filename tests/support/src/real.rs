//! The real CLIs (installed by `scripts/install-clis.sh`) against the mock model server
//! (`tests/fixtures/mock-model`): each CLI gets a sandbox of its own, a home, a workspace and a
//! config that points it at the mock, and never sees a user's real configuration.

pub mod hosted;
pub mod repo;

use std::fs::File;
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use cli_agent_engine::{
    Agent, AgentEvent, Engine, EngineConfig, Outcome, Permission, Profile, RunRequest, clis,
};
use serde_json::Value;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use crate::common::cli_fixtures::{FileSpec, fixture};
use crate::common::{assert_none_with_env, binary, pids_with_env, repo, temp_dir, unique};

/// Which release of each real CLI the tests drive: the pinned ones (tests/real/package.json),
/// or with `CAM_CLIS=latest` the newest, for the canary (`scripts/canary`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Releases {
    Pinned,
    Latest,
}

impl Releases {
    /// The releases `CAM_CLIS` names: `pinned` (the default) or `latest`.
    pub fn chosen() -> Self {
        match std::env::var("CAM_CLIS").as_deref() {
            Ok("latest") => Self::Latest,
            Ok("pinned" | "") | Err(_) => Self::Pinned,
            Ok(other) => panic!("CAM_CLIS={other}: say `pinned` (the default) or `latest`"),
        }
    }

    /// Where scripts/install-clis.sh installs them, and the command that does.
    fn installed_by(self) -> (&'static str, &'static str) {
        match self {
            Self::Pinned => (".cli-agents", "scripts/install-clis.sh"),
            Self::Latest => (".cli-agents-latest", "scripts/install-clis.sh latest"),
        }
    }
}

/// The installed CLI, of the releases `CAM_CLIS` chose. When it is missing a local run skips
/// (with a message naming the install command) and CI, which sets `CAM_TEST_REQUIRE_ALL=1`,
/// fails.
pub fn installed(agent: Agent) -> Option<PathBuf> {
    let (dir, install) = Releases::chosen().installed_by();
    let bin = repo()
        .join(dir)
        .join("node_modules/.bin")
        .join(agent.name());
    if bin.exists() {
        return Some(bin);
    }
    let message = format!("{agent} is not installed in {dir}/: run {install}");
    assert!(
        std::env::var_os("CAM_TEST_REQUIRE_ALL").is_none_or(|v| v != "1"),
        "{message}"
    );
    eprintln!("skipped: {message}");
    None
}

/// Run `scenario` for every CLI of the registry (or those `CAM_TEST_CLIS=a,b` names), one
/// after another, each in a task of its own so that one CLI's failure hides no other's;
/// then fail naming every CLI that failed on a line of its own, `failed for: a, b` (which the
/// canary's report reads), then why.
pub async fn for_every_cli<F, Fut>(scenario: F)
where
    F: Fn(Agent) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let only = std::env::var("CAM_TEST_CLIS").ok();
    let chosen = |agent: &Agent| {
        only.as_deref()
            .is_none_or(|list| list.split(',').any(|name| name == agent.name()))
    };
    let mut failed = Vec::new();
    for agent in clis::builtin_agents().filter(chosen) {
        if let Err(error) = tokio::spawn(scenario(agent)).await {
            failed.push((agent, error));
        }
    }
    let names: Vec<&str> = failed.iter().map(|(agent, _)| agent.name()).collect();
    let why: Vec<String> = failed
        .iter()
        .map(|(agent, error)| format!("{agent}: {error}"))
        .collect();
    assert!(
        failed.is_empty(),
        "failed for: {}\n{}",
        names.join(", "),
        why.join("\n")
    );
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
        let dir = temp_dir("mock-model");
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
    /// The settings docs/clis.md recommends for fast failures.
    Shortened,
    /// The CLI's defaults (codex retries a refused connection forever).
    Defaults,
}

/// One CLI's isolated world: a home, state dirs, a temp dir and a workspace under one
/// directory, and a wrapper script that sets the environment and `exec`s the real CLI, so
/// the engine, `run` and the server all drive the CLI exactly as a user's would.
///
/// The engine learns the same environment (as a custom agent's `env`, or the variables of a
/// `run` or server process, see [`Sandbox::env`]): it finds the CLI's state dirs there,
/// which the kernel sandbox keeps writable.
pub struct Sandbox {
    /// The CLI under its own name, with the sandbox's environment as its profile.
    pub agent: Agent,
    pub workspace: PathBuf,
    pub wrapper: PathBuf,
    /// `CAM_TEST_TAG=<unique>`, inherited by every process the CLI starts.
    pub tag: String,
    env: Vec<(String, String)>,
    dir: TempDir,
}

impl Sandbox {
    pub fn new(agent: Agent, real_bin: &Path, port: u16, retries: Retries) -> Self {
        let dir = temp_dir(&format!("real-{agent}"));
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
        let profile = Profile {
            env: env.clone(),
            ..Profile::default()
        };
        Self {
            agent: Agent::new(agent.name(), agent.cli(), profile),
            workspace: root.join("workspace"),
            wrapper,
            tag,
            env,
            dir,
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The variables the wrapper sets: give them to a `run` or server process too, as a
    /// user's server would have them, so that its engine sees the CLI's state dirs.
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// An engine that runs this sandbox's CLI.
    pub fn engine(&self) -> Engine {
        Engine::new(self.engine_config())
    }

    /// An engine that builds the CLI's command line at [`shell_permission`], the loosest
    /// level its flags allow here, whatever a run's level: only the kernel sandbox (which
    /// follows the run's level) bounds what its shell tool writes.
    pub fn loosened_engine(&self) -> Engine {
        Engine::new(EngineConfig {
            test_cli_permission: Some(shell_permission(self.agent)),
            ..self.engine_config()
        })
    }

    fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            binaries: [(self.agent.name().to_owned(), self.wrapper.clone())]
                .into_iter()
                .collect(),
            ..EngineConfig::default()
        }
    }

    /// A request for this sandbox's CLI, bounded by [`RUN_DEADLINE`]: a CLI that hangs
    /// comes back `timed_out` instead of holding the test for the engine's default 30 min.
    pub fn request(&self, prompt: &str) -> RunRequest {
        let mut request = RunRequest::new(prompt, &self.workspace);
        request.timeout = Some(RUN_DEADLINE);
        request
    }

    /// Processes this sandbox's CLI started that are still alive.
    pub fn survivors(&self) -> Vec<i32> {
        pids_with_env(&self.tag)
    }

    /// Whether a process of this sandbox's CLI runs a command line starting with `argv`.
    pub fn runs(&self, argv: &[&str]) -> bool {
        self.survivors().into_iter().any(|pid| {
            u32::try_from(pid)
                .ok()
                .and_then(cli_agent_engine::platform::arguments)
                .is_some_and(|args| {
                    args.len() >= argv.len() && args.iter().zip(argv).all(|(arg, want)| arg == want)
                })
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
        // The engine's private TMPDIR (under the kernel sandbox) stays the CLI's.
        match key {
            "TMPDIR" => script.push_str(&format!("export {key}=\"${{{key}:-{value}}}\"\n")),
            _ => script.push_str(&format!("export {key}='{value}'\n")),
        }
    }
    script.push_str(&format!("export {tag}\nexec '{}' \"$@\"\n", path(real_bin)));
    std::fs::write(wrapper, script).expect("write the wrapper");
    std::fs::set_permissions(wrapper, std::fs::Permissions::from_mode(0o755))
        .expect("make the wrapper executable");
}

/// Write `agent`'s config under `root` and return the environment that points it at the
/// mock, as its fixture (`tests/fixtures/clis/<cli>/cli.toml`) describes.
fn configure(agent: Agent, root: &Path, port: u16, retries: Retries) -> Vec<(String, String)> {
    let real = fixture(agent).real;
    let mut setups = vec![real.always];
    if retries == Retries::Shortened {
        setups.push(real.shortened);
    }
    let fill = |text: &str| {
        text.replace("{root}", &path(root))
            .replace("{base}", &format!("http://127.0.0.1:{port}"))
            .replace("{port}", &port.to_string())
    };
    let mut env = Vec::new();
    for setup in setups {
        for spec in &setup.files {
            write_spec(root, spec, &fill);
        }
        env.extend(
            setup
                .env
                .iter()
                .map(|(key, value)| (key.clone(), fill(value))),
        );
    }
    env
}

/// Append `spec`'s text to its file, or merge its JSON into the file's.
fn write_spec(root: &Path, spec: &FileSpec, fill: &impl Fn(&str) -> String) {
    let file = root.join(&spec.path);
    let existing = std::fs::read_to_string(&file).unwrap_or_default();
    let contents = match (&spec.text, &spec.json) {
        (Some(text), None) => existing + &fill(text),
        (None, Some(json)) => {
            let mut merged: Value = serde_json::from_str(&existing).unwrap_or(Value::Null);
            let json = serde_json::from_str(&fill(json))
                .unwrap_or_else(|error| panic!("{}: {error}", spec.path));
            merge(&mut merged, json);
            merged.to_string()
        }
        _ => panic!("{}: give a file either `text` or `json`", spec.path),
    };
    write(root, &spec.path, &contents);
}

/// Merge `patch` into `target`: objects key by key, anything else replaced.
fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(target.entry(key).or_insert(Value::Null), value);
            }
        }
        (target, patch) => *target = patch,
    }
}

fn write(root: &Path, relative: &str, contents: &str) {
    let file = root.join(relative);
    std::fs::create_dir_all(file.parent().expect("a parent dir")).expect("config dir");
    std::fs::write(file, contents).expect("write config");
}

/// Run `request` through a fresh engine of `sandbox`, collecting the events it reports.
pub async fn run(
    sandbox: &Sandbox,
    request: RunRequest,
    cancel: CancellationToken,
) -> (Outcome, Vec<AgentEvent>) {
    run_on(&sandbox.engine(), sandbox.agent, request, cancel).await
}

/// [`run`] on `engine`, which remembers the sessions of its earlier runs.
pub async fn run_on(
    engine: &Engine,
    agent: Agent,
    request: RunRequest,
    cancel: CancellationToken,
) -> (Outcome, Vec<AgentEvent>) {
    crate::common::adopt_orphans();
    let mut events = Vec::new();
    let outcome = engine
        .run(agent, request, cancel, &mut |batch: &[AgentEvent]| {
            events.extend_from_slice(batch)
        })
        .await
        .expect("the run starts");
    (outcome, events)
}

/// The permission under which `agent` offers its shell tool to the model without asking.
pub fn shell_permission(agent: Agent) -> Permission {
    fixture(agent).real.shell_permission
}

/// A prompt whose shell call sleeps `secs` seconds.
pub fn sleep_prompt(agent: Agent, secs: u32) -> String {
    fixture(agent)
        .real
        .sleep_prompt
        .replace("{secs}", &secs.to_string())
}

/// Generous bound for one real-CLI run on a loaded 2-core machine; opencode's fixed retries
/// of a refused connection take about 70 s of it.
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
        let command = binary();
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
            // claude 2.1.332 defers MCP tools behind its ToolSearch, so the model's first
            // request would list none of ours for the mock to call by name.
            "claude" => command
                .args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
                .arg("--mcp-config")
                .arg(self.root().join("mcp.json"))
                .arg("--strict-mcp-config")
                .arg(format!("--allowedTools=mcp__{MCP_SERVER}"))
                .env("ENABLE_TOOL_SEARCH", "false"),
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
