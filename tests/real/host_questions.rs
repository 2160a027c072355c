//! The newest Claude Code as the host puts our server's questions to the person, on its
//! defaults (protocol 2026-07-28: the question is our call's `InputRequiredResult`, answered
//! by Claude Code's retry) over stdio and over Streamable HTTP, and forced to the old handshake
//! (`MCP_PROTOCOL_NEGOTIATION=legacy`: an `elicitation/create` request). An `Elicitation`
//! hook of Claude Code's settings stands in for the person: it keeps each question it gets
//! and answers accept (with `allow` ticked) or decline.
//!
//! Past the ceiling and outside the roots, an accept runs the inner codex as asked and a
//! decline refuses the call; the real claude as the delegate, at `read-only`, asks before a
//! shell command: the allow runs it, the decline denies it. Our server's log shows which way
//! the question went, and no request to a 2026-07-28 client. Nothing is left behind.

use crate::common;
use crate::mcp;
use crate::real;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cli_agent_engine::{Agent, clis};
use common::{TempDir, unique, wait_until};
use mcp::Server;
use real::{MCP_SERVER, MockModel, Retries, Sandbox};
use serde_json::{Value, json};

/// How Claude Code reaches our server.
#[derive(Clone, Copy, Debug)]
enum Link {
    /// Claude Code's defaults: protocol 2026-07-28 on stdio.
    Stdio,
    /// Claude Code's defaults: protocol 2026-07-28 on Streamable HTTP, to a server we started.
    Http,
    /// `MCP_PROTOCOL_NEGOTIATION=legacy`: the `initialize` handshake on stdio.
    LegacyStdio,
}

impl Link {
    const ALL: [Link; 3] = [Link::Stdio, Link::Http, Link::LegacyStdio];

    fn modern(self) -> bool {
        !matches!(self, Link::LegacyStdio)
    }
}

/// The person's answer, as the hook gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    Allow,
    Decline,
}

impl Answer {
    /// What the hook prints: the answer as Claude Code takes it from an `Elicitation` hook.
    fn hook_output(self) -> Value {
        let mut answer = json!({"hookEventName": "Elicitation", "action": "decline"});
        if self == Answer::Allow {
            answer["action"] = json!("accept");
            answer["content"] = json!({"allow": true});
        }
        json!({ "hookSpecificOutput": answer })
    }
}

/// Claude Code hosting our server, which runs `inner` for it, both against one mock.
struct World {
    mock: MockModel,
    host: Sandbox,
    inner: Sandbox,
    link: Link,
    /// Our server, when Claude Code reaches it over HTTP.
    http: Option<Server>,
    /// Where our server logs, rmcp's debug lines included.
    log: std::path::PathBuf,
    /// A directory outside the roots our server allows.
    outside: TempDir,
    server_seen: AtomicBool,
}

impl World {
    async fn new(inner: Agent, link: Link) -> Option<Self> {
        let (host_bin, inner_bin) = (real::installed(clis::CLAUDE)?, real::installed(inner)?);
        let mock = MockModel::start();
        let host = Sandbox::new(clis::CLAUDE, &host_bin, mock.port, Retries::Shortened);
        let inner = Sandbox::new(inner, &inner_bin, mock.port, Retries::Shortened);
        let log = host.root().join("server.log");
        let env = server_env(&host, &inner, &log);
        let http = match link {
            Link::Http => Some(serve_http(&host, &env).await),
            Link::Stdio | Link::LegacyStdio => {
                let env: Vec<_> = env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                host.add_our_server(&env);
                None
            }
        };
        Some(Self {
            mock,
            host,
            inner,
            link,
            http,
            log,
            outside: TempDir::new("host-questions-outside"),
            server_seen: false.into(),
        })
    }

    /// One headless turn of Claude Code on `prompt`, the hook answering `answer`: the hook's
    /// questions, in order.
    async fn turn(&self, prompt: &str, answer: Answer) -> Vec<Value> {
        let asked = self
            .host
            .root()
            .join(format!("asked-{}.jsonl", unique("turn")));
        let settings = self.hook_settings(&asked, answer);
        let mut turn = self.host.host_turn(prompt);
        turn.arg("--settings").arg(settings.to_string());
        // Claude Code defers MCP tools behind its tool search: the mock calls ours by name.
        turn.env("ENABLE_TOOL_SEARCH", "false");
        if let Link::LegacyStdio = self.link {
            turn.env("MCP_PROTOCOL_NEGOTIATION", "legacy");
        }
        let output = self.watching_our_server(turn).await;
        assert!(output.status.success(), "{}", describe(&output));
        std::fs::read_to_string(&asked)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Run `turn` to its end, watching for our server among the host's processes.
    async fn watching_our_server(&self, mut turn: tokio::process::Command) -> std::process::Output {
        let server = [env!("CARGO_BIN_EXE_cli-agent-mcp"), "serve"];
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
        output
            .expect("Claude Code did not finish its turn")
            .expect("start Claude Code")
    }

    /// Settings whose `Elicitation` hook appends each question it gets to `asked` and
    /// answers `answer`.
    fn hook_settings(&self, asked: &Path, answer: Answer) -> Value {
        let hook = self.host.root().join(format!("{}.sh", unique("hook")));
        let script = format!(
            "#!/bin/sh\n{{ cat; echo; }} >> '{}'\nprintf '%s' '{}'\n",
            asked.display(),
            answer.hook_output()
        );
        write_executable(&hook, &script);
        json!({"hooks": {"Elicitation": [{"hooks": [
            {"type": "command", "command": hook.display().to_string()}
        ]}]}})
    }

    /// Our tools' results as Claude Code handed them to its model, in order.
    fn tool_results(&self) -> Vec<String> {
        self.mock
            .requests()
            .into_iter()
            .filter(|request| {
                request["protocol"] == "claude"
                    && request["prompt"]
                        .as_str()
                        .is_some_and(|prompt| prompt.contains("CALL_TOOL:"))
            })
            .filter_map(|request| request["tool_output"].as_str().map(str::to_owned))
            .collect()
    }

    /// Whether our server answered a call with the person's question (2026-07-28) or sent
    /// the question as a request (2025-11-25), as its log says; never the other way.
    fn assert_asked_the_links_way(&self) {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let answered = log.contains("the call answers with the person's question");
        let requested = log.contains("asking the person with an elicitation request");
        let (want_answered, want_requested) = match self.link.modern() {
            true => (true, false),
            false => (false, true),
        };
        assert_eq!(
            (answered, requested),
            (want_answered, want_requested),
            "{:?}: asked by an InputRequiredResult {answered}, by a request {requested}\n{log}",
            self.link
        );
    }

    /// Neither Claude Code, nor our server, nor the inner CLI left a process behind.
    async fn assert_nothing_left(mut self) {
        if let Some(mut server) = self.http.take() {
            server.close_stdin();
            server.signal(nix::sys::signal::Signal::SIGTERM);
            server.wait_exit(common::DEADLINE).await;
        } else {
            assert!(
                self.server_seen.load(Ordering::Relaxed),
                "our server never ran among the host's processes"
            );
        }
        wait_until("the host, our server and the inner CLI are gone", || {
            self.host.survivors().is_empty() && self.inner.survivors().is_empty()
        })
        .await;
    }
}

/// Our server's settings: the ceiling `workspace-write`, the host's workspace the one root,
/// the inner CLI's wrapper and environment, a debug log in `log`.
fn server_env(host: &Sandbox, inner: &Sandbox, log: &Path) -> Vec<(String, String)> {
    let tag = host.tag.split_once('=').expect("NAME=value").1.to_owned();
    let mut env = vec![
        (inner.agent.env_var("BIN"), path(&inner.wrapper)),
        ("CAM_ALLOWED_ROOTS".to_owned(), path(&host.workspace)),
        (
            "CAM_MAX_PERMISSION".to_owned(),
            "workspace-write".to_owned(),
        ),
        (
            "CAM_STATE_DIR".to_owned(),
            path(&host.root().join("cam-state")),
        ),
        ("CAM_ASK_TIMEOUT_SECS".to_owned(), "120".to_owned()),
        ("CAM_LOG".to_owned(), "info,rmcp=debug".to_owned()),
        ("CAM_LOG_FILE".to_owned(), path(log)),
        // Our server and its guardian count as the host's processes.
        ("CAM_TEST_TAG".to_owned(), tag),
    ];
    env.extend(inner.env().iter().cloned());
    env
}

/// Our server on Streamable HTTP with `env`, in the host's workspace, and Claude Code's MCP
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

fn write_executable(file: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(file, script).expect("write the hook");
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn path(path: &Path) -> String {
    path.to_str().expect("UTF-8 temp path").to_owned()
}

fn describe(output: &std::process::Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The message of each question the hook got.
fn messages(asked: &[Value]) -> Vec<String> {
    asked
        .iter()
        .map(|question| question["message"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Above the ceiling, then outside the roots, the person answers `answer` to both: allowed,
/// the inner codex runs each call as asked; declined, each call is refused as if nobody had
/// been asked and codex never starts.
async fn past_the_bounds(link: Link, answer: Answer) {
    let Some(world) = World::new(clis::CODEX, link).await else {
        return;
    };
    let (above, outside) = (unique("above"), unique("outside"));
    let prompt = format!(
        "CALL_TOOL: codex {}\nNEXT_CALL: codex {}",
        json!({"prompt": format!("ANSWER: {above}"), "permission": "unlimited"}),
        json!({"prompt": format!("ANSWER: {outside}"), "workspace": world.outside.path()}),
    );

    let asked = world.turn(&prompt, answer).await;

    let messages = messages(&asked);
    assert_eq!(messages.len(), 2, "{link:?}: {asked:#?}");
    assert!(
        messages[0].contains("above your ceiling workspace-write"),
        "{messages:#?}"
    );
    assert!(
        messages[1].contains("outside the directories you allow"),
        "{messages:#?}"
    );
    let results = world.tool_results();
    assert_eq!(results.len(), 2, "{link:?}: {results:#?}");
    for (result, (marker, refusal)) in results.iter().zip([
        // Claude Code quotes a reply that follows a declined question by its first 200
        // characters: the start of our refusal.
        (&above, "is above what this server allows"),
        (&outside, "is outside the directories this server allows"),
    ]) {
        let ran = !world.mock.requests_with(clis::CODEX, marker).is_empty();
        match answer {
            Answer::Allow => {
                assert!(
                    result.contains(marker.as_str()) && ran,
                    "{link:?}: {result}"
                );
            }
            Answer::Decline => {
                assert!(result.contains(refusal) && !ran, "{link:?}: {result}");
            }
        }
    }
    world.assert_asked_the_links_way();
    world.assert_nothing_left().await;
}

/// The real claude, at `read-only`, asks before a shell command its level does not let it
/// run unasked: allowed, the command runs; declined, claude is told what was denied.
async fn a_delegates_question(link: Link, answer: Answer) {
    let Some(world) = World::new(clis::CLAUDE, link).await else {
        return;
    };
    let shell = "RUN_SHELL: sh -c \"expr 6 '*' 7\"";
    let prompt = format!("CALL_TOOL: claude {}", json!({ "prompt": shell }));

    let asked = world.turn(&prompt, answer).await;

    let messages = messages(&asked);
    assert_eq!(messages.len(), 1, "{link:?}: {asked:#?}");
    assert!(messages[0].contains("claude's Bash"), "{messages:#?}");
    assert!(messages[0].contains("expr 6"), "{messages:#?}");
    let results = world.tool_results();
    let result = results.first().expect("our tool's result reached the host");
    match answer {
        Answer::Allow => assert!(result.contains("tool said: 42"), "{link:?}: {result}"),
        Answer::Decline => assert!(
            !result.contains("tool said: 42") && result.contains("denied claude's Bash"),
            "{link:?}: {result}"
        ),
    }
    world.assert_asked_the_links_way();
    world.assert_nothing_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_on_every_link_asks_the_person_past_the_bounds_and_the_answer_holds() {
    for link in Link::ALL {
        for answer in [Answer::Allow, Answer::Decline] {
            past_the_bounds(link, answer).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_on_every_link_answers_a_real_claude_delegates_question() {
    for link in Link::ALL {
        for answer in [Answer::Allow, Answer::Decline] {
            a_delegates_question(link, answer).await;
        }
    }
}
