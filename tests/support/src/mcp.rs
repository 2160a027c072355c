//! A small MCP client for end-to-end tests and the server benchmark: it starts the built
//! `cli-agent-mcp`, speaks newline-delimited JSON-RPC over its stdio, and keeps every message
//! the server writes, in order, so a test can ask what arrived and when.
//!
//! Every wait has a generous deadline and panics with the server's stderr when it runs out.
//! `Server::builder()` points every CLI at the fake ([`common::fake_cli`]), clears the
//! caller's `CAM_*` / `FAKE_CLI_*` variables, passes `FAKE_CLI_*` on to the CLIs
//! (`CAM_PASS_ENV`), allows calls in the temp dir and the crate (`CAM_ALLOWED_ROOTS`) and
//! gives each server a job store of its own in the temp dir (`CAM_STATE_DIR`);
//! change that with `env` / `env_remove`.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{self, binary, repo};
#[cfg(unix)]
use nix::sys::signal::Signal;
#[cfg(unix)]
use nix::unistd::Pid;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::watch;

/// How long to wait for a message; generous for a loaded 2-core machine.
pub const DEADLINE: Duration = Duration::from_secs(60);
/// The protocol version `initialize` asks for unless told otherwise.
pub const LEGACY_VERSION: &str = "2025-11-25";
pub const MODERN_VERSION: &str = "2026-07-28";

/// Every built-in CLI's tool name, in the registry's order.
pub fn agents() -> Vec<&'static str> {
    common::cli_fixtures::names()
}

pub const JOB_TOOLS: [&str; 8] = [
    "job_wait",
    "job_result",
    "job_cancel",
    "job_list",
    "job_diff",
    "job_apply",
    "job_discard",
    "job_revert",
];

pub fn bin_env_var(agent: &str) -> String {
    format!("CAM_{}_BIN", agent.to_ascii_uppercase())
}

/// Where the tests' workspaces are: the temp dir, and the repository (the servers' default
/// directory), in a list as PATH's (`;` between them on Windows), as CAM_ALLOWED_ROOTS is read.
pub fn test_roots() -> std::ffi::OsString {
    std::env::join_paths([std::env::temp_dir().as_path(), repo()])
        .expect("no root holds the list's separator")
}

/// How to start a server.
pub struct Builder {
    command: Command,
    /// The server's own job store, removed with it, unless the test names one.
    state: Option<TempDir>,
    /// Close the reading end of the server's stderr at once, as a host that stopped reading.
    stderr_closed: bool,
}

impl Builder {
    pub fn stderr_closed(mut self) -> Self {
        self.stderr_closed = true;
        self
    }

    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        if key == "CAM_STATE_DIR" {
            self.state = None;
        }
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    /// Start the server as the leader of a process group of its own.
    #[cfg(unix)]
    pub fn own_process_group(mut self) -> Self {
        self.command.process_group(0);
        self
    }

    pub fn cwd(mut self, dir: &Path) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// Start `serve --http 127.0.0.1:0`; the server and the URL it logs that it serves.
    pub async fn spawn_http(self) -> (Server, String) {
        let server = self.arg("--http").arg("127.0.0.1:0").spawn();
        let start = Instant::now();
        loop {
            let stderr = server.stderr();
            let url = stderr
                .split("url=")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next());
            if let Some(url) = url {
                return (server, url.to_owned());
            }
            assert!(
                start.elapsed() < DEADLINE,
                "the server never said where it listens\n{stderr}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    pub fn spawn(mut self) -> Server {
        let mut child = self.command.spawn().expect("start cli-agent-mcp");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let inbox = Inbox::default();
        let (count_tx, count) = watch::channel(0usize);
        tokio::spawn(read_messages(stdout, inbox.clone(), count_tx));
        let stderr_text = Arc::new(Mutex::new(String::new()));
        let (drained_tx, stderr_drained) = watch::channel(self.stderr_closed);
        if self.stderr_closed {
            drop(stderr);
        } else {
            tokio::spawn(read_stderr(stderr, stderr_text.clone(), drained_tx));
        }
        Server {
            pid: child.id().map_or(0, |pid| pid as i32),
            child,
            stdin: Some(stdin),
            inbox,
            count,
            stderr: stderr_text,
            stderr_drained,
            next_id: 1,
            _state: self.state,
        }
    }
}

/// Everything the server wrote on stdout, parsed, in order, with when it was read.
#[derive(Clone, Default)]
struct Inbox {
    messages: Arc<Mutex<Vec<(Instant, Value)>>>,
    closed: Arc<Mutex<bool>>,
}

async fn read_messages(
    stdout: tokio::process::ChildStdout,
    inbox: Inbox,
    count: watch::Sender<usize>,
) {
    let mut lines = BufReader::new(stdout);
    let mut line = String::new();
    loop {
        line.clear();
        match lines.read_line(&mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Anything but JSON-RPC on stdout is a defect: keep it so assertions see it.
        let message = serde_json::from_str(line.trim_end())
            .unwrap_or_else(|_| json!({"not_json": line.trim_end()}));
        let mut messages = inbox.messages.lock().expect("inbox");
        messages.push((Instant::now(), message));
        count.send_replace(messages.len());
    }
    *inbox.closed.lock().expect("inbox") = true;
    count.send_modify(|_| {});
}

async fn read_stderr(
    mut stderr: tokio::process::ChildStderr,
    text: Arc<Mutex<String>>,
    drained: watch::Sender<bool>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        text.lock()
            .expect("stderr")
            .push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    drained.send_replace(true);
}

/// A running `cli-agent-mcp` and the client end of its MCP channel.
pub struct Server {
    child: Child,
    pid: i32,
    stdin: Option<ChildStdin>,
    inbox: Inbox,
    count: watch::Receiver<usize>,
    stderr: Arc<Mutex<String>>,
    /// True once the server's stderr reached EOF: all it wrote is in `stderr`.
    stderr_drained: watch::Receiver<bool>,
    next_id: i64,
    /// Dropped after `child`, which is killed on drop.
    _state: Option<TempDir>,
}

impl Server {
    /// The binary with a clean environment, every CLI the fake, a 1 s grace, and `serve`.
    pub fn builder() -> Builder {
        Self::bare().arg("serve")
    }

    /// Like [`Server::builder`], without the `serve` subcommand.
    pub fn bare() -> Builder {
        Self::bare_program(binary())
    }

    /// Like [`Server::bare`], running `program` instead of the built binary: an installed
    /// `cli-agent-mcp` (a package's launcher, say), with the same clean environment.
    pub fn bare_program(program: impl AsRef<std::ffi::OsStr>) -> Builder {
        let clean = common::cam_command();
        let mut command = std::process::Command::new(program);
        for (key, value) in clean.get_envs() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        let mut command = Command::from(command);
        for agent in agents() {
            command.env(bin_env_var(agent), common::fake_cli(agent));
        }
        command
            .env("CAM_GRACE_SECS", "1")
            .env("CAM_LOG", "info")
            .env("CAM_PASS_ENV", "FAKE_CLI_*")
            .env("CAM_ALLOWED_ROOTS", test_roots())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let state = common::temp_dir("cam-state");
        command.env("CAM_STATE_DIR", state.path());
        Builder {
            command,
            state: Some(state),
            stderr_closed: false,
        }
    }

    /// A server with the defaults, initialized.
    pub async fn start() -> Self {
        let mut server = Self::builder().spawn();
        server.initialize().await;
        server
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr").clone()
    }

    /// The `initialize` handshake at [`LEGACY_VERSION`]; returns the result.
    pub async fn initialize(&mut self) -> Value {
        self.initialize_with(LEGACY_VERSION).await
    }

    pub async fn initialize_with(&mut self, version: &str) -> Value {
        self.initialize_declaring(version, json!({})).await
    }

    /// The handshake at `version`, the client declaring `capabilities`.
    pub async fn initialize_declaring(&mut self, version: &str, capabilities: Value) -> Value {
        let params = json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "cli-agent-mcp-tests", "version": "0"},
        });
        let id = self.request("initialize", params).await;
        let result = self.result(id).await;
        self.notify("notifications/initialized", None).await;
        result
    }

    pub async fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("serialize");
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// Write `bytes` to the server's stdin as they are: garbage included.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin.write_all(bytes).await.expect("write to the server");
        stdin.flush().await.expect("flush to the server");
    }

    pub async fn notify(&mut self, method: &str, params: Option<Value>) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(&message).await;
    }

    /// Send a request; returns its id.
    pub async fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Start a `tools/call`, with a progress token if given; returns its id.
    pub async fn start_call(
        &mut self,
        tool: &str,
        arguments: Value,
        progress: Option<&str>,
    ) -> i64 {
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Some(token) = progress {
            params["_meta"] = json!({"progressToken": token});
        }
        self.request("tools/call", params).await
    }

    /// The next request the server sent the client with `method` that `answered` does not hold.
    pub async fn server_request(&self, method: &str, answered: &[Value]) -> Value {
        self.wait_for(&format!("a {method} request"), |messages| {
            messages
                .iter()
                .find(|m| {
                    m["method"] == method && m.get("id").is_some() && !answered.contains(&m["id"])
                })
                .cloned()
        })
        .await
    }

    /// Answer the server's request `id` with `result`.
    pub async fn respond(&mut self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    /// Call a tool and wait for its result.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let id = self.start_call(tool, arguments, None).await;
        self.result(id).await
    }

    pub async fn cancel(&mut self, id: i64, reason: &str) {
        let params = json!({"requestId": id, "reason": reason});
        self.notify("notifications/cancelled", Some(params)).await;
    }

    /// The names of the tools the server lists.
    pub async fn tool_names(&mut self) -> Vec<String> {
        let id = self.request("tools/list", json!({})).await;
        let list = self.result(id).await;
        list["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// A round trip: everything the server wrote before answering it has arrived.
    pub async fn ping(&mut self) {
        let id = self.request("ping", json!({})).await;
        self.result(id).await;
    }

    /// The response to request `id` (result or error), waiting for it.
    pub async fn response(&self, id: i64) -> Value {
        self.wait_for(&format!("the response to request {id}"), |messages| {
            messages.iter().find(|m| is_response_to(m, id)).cloned()
        })
        .await
    }

    /// The result of request `id`; panics on an error response.
    pub async fn result(&self, id: i64) -> Value {
        let response = self.response(id).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("request {id} failed: {response}\n{}", self.stderr()),
        }
    }

    pub fn has_response(&self, id: i64) -> bool {
        self.messages().iter().any(|m| is_response_to(m, id))
    }

    /// Every message so far.
    pub fn messages(&self) -> Vec<Value> {
        self.timed_messages().into_iter().map(|(_, m)| m).collect()
    }

    /// Every message so far, with when it was read.
    pub fn timed_messages(&self) -> Vec<(Instant, Value)> {
        self.inbox.messages.lock().expect("inbox").clone()
    }

    /// The params of every progress notification for `token`, in order.
    pub fn progress(&self, token: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| m["method"] == "notifications/progress")
            .map(|m| m["params"].clone())
            .filter(|p| p["progressToken"] == token)
            .collect()
    }

    /// Wait until `found` finds something in the messages.
    pub async fn wait_for<T>(&self, what: &str, mut found: impl FnMut(&[Value]) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        let mut count = self.count.clone();
        loop {
            if let Some(value) = found(&self.messages()) {
                return value;
            }
            assert!(
                !*self.inbox.closed.lock().expect("inbox"),
                "the server closed stdout before {what}\n{}",
                self.stderr()
            );
            if tokio::time::timeout_at(deadline, count.changed())
                .await
                .is_err()
            {
                panic!("timed out waiting for {what}\n{}", self.stderr());
            }
        }
    }

    /// Close the server's stdin: the client is gone.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    #[cfg(unix)]
    pub fn signal(&self, signal: Signal) {
        nix::sys::signal::kill(Pid::from_raw(self.pid), signal).expect("signal the server");
    }

    /// Wait for the server to exit within `limit`; panics otherwise. Then waits, within the
    /// same limit, for the reader to drain its stderr, so what it wrote last is in `stderr()`
    /// (the exit can be seen before the pipe's last bytes are read).
    pub async fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = tokio::time::Instant::now() + limit;
        let status = match tokio::time::timeout_at(deadline, self.child.wait()).await {
            Ok(status) => status.expect("wait for the server"),
            Err(_) => panic!(
                "the server did not exit within {limit:?}\n{}",
                self.stderr()
            ),
        };
        // A descendant holding the pipe past the limit leaves the assertions to say what is missing.
        let _ = tokio::time::timeout_at(deadline, self.stderr_drained.wait_for(|drained| *drained))
            .await;
        status
    }

    /// Whether the server is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

fn is_response_to(message: &Value, id: i64) -> bool {
    message["id"] == id && (message.get("result").is_some() || message.get("error").is_some())
}

/// The text blocks of a tool result, in order.
pub fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect()
}

/// A tool result's text blocks joined, for `contains` checks.
pub fn all_text(result: &Value) -> String {
    texts(result).join("\n")
}

pub fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

/// A tool result's `structuredContent`.
pub fn structured(result: &Value) -> &Value {
    &result["structuredContent"]
}

/// The job a tool result names.
pub fn job_id(result: &Value) -> String {
    structured(result)["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no job_id in {result:#}"))
        .to_owned()
}

/// What a `tools/list` result weighs, in bytes of compact JSON: what the host's model reads of
/// each tool (its name, description and inputSchema), and the whole result (titles,
/// annotations and output schemas too).
#[derive(Clone, Copy, Debug)]
pub struct ListedBytes {
    /// Name, description and inputSchema of every tool.
    pub read: usize,
    /// The same of the agent tools alone.
    pub agents_read: usize,
    pub agent_tools: usize,
    pub whole: usize,
}

impl ListedBytes {
    /// Weigh a `tools/list` result; the agent tools are those not in [`JOB_TOOLS`].
    pub fn of(list: &Value) -> Self {
        let mut bytes = Self {
            read: 0,
            agents_read: 0,
            agent_tools: 0,
            whole: list.to_string().len(),
        };
        for tool in list["tools"].as_array().into_iter().flatten() {
            let read = json!({
                "name": tool["name"],
                "description": tool["description"],
                "inputSchema": tool["inputSchema"],
            })
            .to_string()
            .len();
            bytes.read += read;
            if !JOB_TOOLS.iter().any(|job| tool["name"] == *job) {
                bytes.agents_read += read;
                bytes.agent_tools += 1;
            }
        }
        bytes
    }

    /// What the host's model would read with `clis` agent tools of the same average weight,
    /// each `added` bytes heavier (for arguments still to come), and the same job tools.
    pub fn read_with(&self, clis: usize, added: usize) -> usize {
        let per_tool = self.agents_read / self.agent_tools.max(1);
        (self.read - self.agents_read) + clis * (per_tool + added)
    }
}

/// The agent tools' arguments issue 37 adds, which the 16 KB goal counts.
pub const COMING_ARGUMENTS: [&str; 2] = ["fork", "effort"];
/// What each of them may add to an agent tool, with a short description.
pub const BYTES_AN_ARGUMENT: usize = 100;

/// The bytes an agent tool of `list` is still to grow by: [`BYTES_AN_ARGUMENT`] for each of
/// [`COMING_ARGUMENTS`] its first agent tool does not take yet.
pub fn still_to_come(list: &Value) -> usize {
    let first = list["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|tool| !JOB_TOOLS.iter().any(|job| tool["name"] == *job));
    let Some(properties) = first.map(|tool| &tool["inputSchema"]["properties"]) else {
        return 0;
    };
    let absent = COMING_ARGUMENTS
        .iter()
        .filter(|a| properties[**a].is_null());
    absent.count() * BYTES_AN_ARGUMENT
}
