//! A real coding CLI as the MCP host of our server, which runs another real CLI for it, both
//! against one mock model: the world of `real_hosts` and `host_questions`. Our server is the
//! host's own stdio server, or one the test serves over Streamable HTTP that the host's MCP
//! config names.

use crate::common;
use crate::mcp;
use crate::real;

use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cli_agent_engine::Agent;
use common::wait_until;
use mcp::Server;
use real::{MCP_SERVER, MockModel, Retries, Sandbox};
use serde_json::{Value, json};

/// How the host reaches our server.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Served {
    /// The host starts it, on stdio.
    Stdio,
    /// The test serves it on Streamable HTTP, in the host's workspace.
    Http,
}

/// A host CLI, the CLI our server runs for it, and the mock both talk to.
pub struct World {
    pub mock: MockModel,
    pub host: Sandbox,
    pub inner: Sandbox,
    /// Our server, when the test serves it over HTTP.
    http: Option<Server>,
    /// Whether our server was seen running as the host's process during a turn.
    server_seen: AtomicBool,
}

impl World {
    /// `host` hosting our server on stdio, which runs `inner` with `extra` settings too;
    /// `None` when either CLI is not installed.
    pub async fn new(host: Agent, inner: Agent, extra: &[(&str, String)]) -> Option<Self> {
        Self::serving(host, inner, extra, Served::Stdio).await
    }

    /// As [`World::new`], our server reached as `served` says.
    pub async fn serving(
        host: Agent,
        inner: Agent,
        extra: &[(&str, String)],
        served: Served,
    ) -> Option<Self> {
        let (host_bin, inner_bin) = (real::installed(host)?, real::installed(inner)?);
        let mock = MockModel::start();
        let host = Sandbox::new(host, &host_bin, mock.port, Retries::Shortened);
        let inner = Sandbox::new(inner, &inner_bin, mock.port, Retries::Shortened);
        let env = server_env(&host, &inner, extra);
        let http = match served {
            Served::Stdio => {
                let env: Vec<_> = env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                host.add_our_server(&env);
                None
            }
            Served::Http => Some(serve_http(&host, &env).await),
        };
        Some(Self {
            mock,
            host,
            inner,
            http,
            server_seen: false.into(),
        })
    }

    /// One headless turn of the host on `prompt`: its JSONL, or a panic naming its stderr.
    pub async fn host_turn(&self, prompt: &str) -> Vec<Value> {
        let output = self.turn(self.host.host_turn(prompt)).await;
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Run the host's `turn` to its end, watching for our server among the host's
    /// processes: its output, or a panic naming its stderr.
    pub async fn turn(&self, mut turn: tokio::process::Command) -> Output {
        let server = [common::binary(), "serve"];
        let run = tokio::time::timeout(real::RUN_DEADLINE, turn.output());
        let mut run = std::pin::pin!(run);
        let output = loop {
            tokio::select! {
                output = &mut run => break output,
                () = tokio::time::sleep(Duration::from_millis(100)) => {
                    if self.host.runs(&server) {
                        self.server_seen.store(true, Ordering::Relaxed);
                    }
                }
            }
        };
        let output = output
            .unwrap_or_else(|_| panic!("{} did not finish its turn", self.host.agent))
            .expect("start the host CLI");
        assert!(output.status.success(), "{}", describe(&output));
        output
    }

    /// The host's turns: their prompt is the script (the inner CLI's is the inner prompt).
    pub fn host_requests(&self) -> Vec<Value> {
        self.mock
            .requests()
            .into_iter()
            .filter(|request| {
                request["protocol"] == self.host.agent.name()
                    && request["prompt"]
                        .as_str()
                        .is_some_and(|prompt| prompt.contains("CALL_TOOL:"))
            })
            .collect()
    }

    /// The host's requests to the mock that answered one of its tool calls with `needle`.
    pub fn host_requests_with_result(&self, needle: &str) -> Vec<Value> {
        self.host_requests()
            .into_iter()
            .filter(|request| {
                request["tool_output"]
                    .as_str()
                    .is_some_and(|output| output.contains(needle))
            })
            .collect()
    }

    /// Our tools' structured results as the host handed them to its model, in order.
    pub fn host_results(&self) -> Vec<Value> {
        self.host_requests()
            .iter()
            .filter_map(|request| request["tool_output"].as_str().map(structured_result))
            .collect()
    }

    /// The tools the host's model called, as the mock scripted them, in order.
    pub fn host_tool_calls(&self) -> Vec<Value> {
        self.host_requests()
            .into_iter()
            .filter(|request| request["scenario"]["name"] == "tool_call")
            .map(|request| request["scenario"].clone())
            .collect()
    }

    /// Neither the host, nor our server, nor the inner CLI left a process behind.
    pub async fn assert_nothing_left(mut self) {
        match self.http.take() {
            Some(mut server) => {
                server.close_stdin();
                server.signal(nix::sys::signal::Signal::SIGTERM);
                server.wait_exit(common::DEADLINE).await;
            }
            None => assert!(
                self.server_seen.load(Ordering::Relaxed),
                "our server never ran among the host's processes"
            ),
        }
        wait_until("the host, our server and the inner CLI are gone", || {
            self.host.survivors().is_empty() && self.inner.survivors().is_empty()
        })
        .await;
    }
}

/// Our server's settings: the inner CLI's wrapper and environment (so that our server's
/// sandbox finds its state dirs), the host's workspace the one root, a store of its own, the
/// host's tag (our server and its guardian count as the host's processes), and `extra`.
fn server_env(host: &Sandbox, inner: &Sandbox, extra: &[(&str, String)]) -> Vec<(String, String)> {
    let tag = host.tag.split_once('=').expect("NAME=value").1.to_owned();
    let mut env = vec![
        (inner.agent.env_var("BIN"), path(&inner.wrapper)),
        ("CAM_ALLOWED_ROOTS".to_owned(), path(&host.workspace)),
        (
            "CAM_STATE_DIR".to_owned(),
            path(&host.root().join("cam-state")),
        ),
        ("CAM_TEST_TAG".to_owned(), tag),
    ];
    env.extend(
        extra
            .iter()
            .map(|(key, value)| ((*key).to_owned(), value.clone())),
    );
    env.extend(inner.env().iter().cloned());
    env
}

/// Our server on Streamable HTTP with `env`, in the host's workspace, and the host's MCP
/// config naming it.
async fn serve_http(host: &Sandbox, env: &[(String, String)]) -> Server {
    let builder = env
        .iter()
        .fold(Server::builder(), |builder, (key, value)| {
            builder.env(key, value)
        })
        .cwd(&host.workspace);
    let (server, url) = builder.spawn_http().await;
    let config = json!({"mcpServers": {MCP_SERVER: {"type": "http", "url": url}}});
    std::fs::write(host.root().join("mcp.json"), config.to_string()).expect("the MCP config");
    server
}

/// Our tool's structured result as the host handed it to its model: claude passes the JSON
/// itself, codex after a `Wall time: …\nOutput:\n` frame.
fn structured_result(output: &str) -> Value {
    let json = output.find('{').map_or(output, |start| &output[start..]);
    serde_json::from_str(json).unwrap_or_else(|error| panic!("{error}: {output}"))
}

pub fn path(path: &Path) -> String {
    path.to_str().expect("UTF-8 temp path").to_owned()
}

fn describe(output: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
