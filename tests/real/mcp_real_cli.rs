//! The MCP server with the real CLIs against the mock model server: for each CLI a plain
//! call, a resume of its session, and a cancelled call whose whole tree goes while the server
//! keeps serving; the server SIGKILLed while each CLI's shell tool sleeps, leaving nothing; and
//! two background forks of one claude session.
//! A CLI that is not installed skips locally and fails in CI (see tests/real).

use crate::common;
use crate::mcp;
use crate::real;

use cli_agent_engine::{Agent, clis};
use common::wait_until;
use mcp::{Server, is_error, structured, texts};
use nix::sys::signal::Signal;
use real::{MockModel, Retries, Sandbox};
use serde_json::{Value, json};

fn assert_completed(result: &Value) {
    assert!(!is_error(result), "{result:#}");
    assert_eq!(structured(result)["status"], "completed", "{result:#}");
}

/// The mock model, a sandbox for `agent`'s real CLI, and a server that runs it; `None` when
/// the CLI is not installed.
async fn serve(agent: Agent) -> Option<(MockModel, Sandbox, Server)> {
    let bin = real::installed(agent)?;
    let mock = MockModel::start();
    let sandbox = Sandbox::new(agent, &bin, mock.port, Retries::Shortened);
    // The person running these servers allows `unlimited`, which some CLIs' shell tool needs.
    let builder = Server::builder();
    let builder = sandbox
        .env()
        .iter()
        .fold(builder, |builder, (key, value)| builder.env(key, value));
    let mut server = builder
        .env(&agent.env_var("BIN"), &sandbox.wrapper)
        .env("CAM_MAX_PERMISSION", "unlimited")
        .cwd(&sandbox.workspace)
        .spawn();
    server.initialize().await;
    Some((mock, sandbox, server))
}

async fn plain_call_resume_and_cancel(agent: Agent) {
    let Some((mock, sandbox, mut server)) = serve(agent).await else {
        return;
    };
    let tool = agent.name();

    let first = server
        .call(tool, json!({"prompt": "ANSWER: first-through-mcp"}))
        .await;
    assert_completed(&first);
    assert_eq!(texts(&first)[0].trim(), "first-through-mcp", "{first:#}");
    if let Err(why) = agent.cli().resumes() {
        // It names no session, and a session_id is refused with the reason.
        assert!(structured(&first)["session_id"].is_null(), "{first:#}");
        let refused = server
            .call(
                tool,
                json!({"prompt": "ANSWER: x", "session_id": "an-earlier-one"}),
            )
            .await;
        assert!(texts(&refused)[0].contains(why), "{refused:#}");
    } else {
        resume_through_the_server(&mock, &mut server, agent, &first).await;
    }

    let prompt = "SLOW: 300";
    let id = server
        .start_call(tool, json!({"prompt": prompt}), None)
        .await;
    wait_until("the slow stream has begun", || {
        !mock.requests_with(agent, prompt).is_empty()
    })
    .await;
    wait_until("the CLI runs", || !sandbox.survivors().is_empty()).await;
    server.cancel(id, "the test cancels it").await;
    wait_until("the cancelled call's tree is gone", || {
        sandbox.survivors().is_empty()
    })
    .await;
    server.ping().await;
    assert!(server.is_running(), "{}", server.stderr());
    let after = server.call(tool, json!({"prompt": "say hello"})).await;
    assert_completed(&after);
}

/// SIGKILL of the server while the CLI's shell tool sleeps in a session of its own: the
/// guardian leaves nothing of the run.
async fn sigkill_while_the_shell_tool_sleeps_leaves_nothing(agent: Agent) {
    let Some((_mock, sandbox, mut server)) = serve(agent).await else {
        return;
    };
    let permission = real::shell_permission(agent).name();
    let prompt = real::sleep_prompt(agent, 478);
    let arguments = json!({"prompt": prompt, "permission": permission});
    let call = server.start_call(agent.name(), arguments, None).await;
    wait_until("the tool's `sleep 478` runs", || {
        if server.has_response(call) {
            panic!(
                "the {agent} call ended before its tool ran: {:?}",
                server.messages().last()
            );
        }
        sandbox.runs(&["sleep", "478"])
    })
    .await;

    server.signal(Signal::SIGKILL);
    wait_until("every process of the run is gone", || {
        sandbox.survivors().is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_of_every_real_cli_die_with_a_killed_server() {
    for agent in clis::builtin_agents() {
        sigkill_while_the_shell_tool_sleeps_leaves_nothing(agent).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_real_cli_through_the_server() {
    real::for_every_cli(plain_call_resume_and_cancel).await;
}

/// Two background forks of one real claude session through the server, collected with one
/// `job_wait`: each answers from the session's context under a session of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_background_forks_of_a_real_claude_session_through_the_server() {
    let agent = clis::CLAUDE;
    let Some((mock, _sandbox, mut server)) = serve(agent).await else {
        return;
    };
    let first = server
        .call("claude", json!({"prompt": "ANSWER: remember-the-alpaca"}))
        .await;
    assert_completed(&first);
    let session = structured(&first)["session_id"].clone();
    let mut ids = Vec::new();
    for answer in ["first-fork", "second-fork"] {
        let fork = json!({"prompt": format!("ANSWER: {answer}"), "session_id": session,
                          "fork": true, "background": true});
        let started = server.call("claude", fork).await;
        assert!(!is_error(&started), "{started:#}");
        ids.push(
            structured(&started)["job_id"]
                .as_str()
                .expect("job_id")
                .to_owned(),
        );
    }
    let deadline = std::time::Instant::now() + real::RUN_DEADLINE;
    let waited = loop {
        let waited = server
            .call("job_wait", json!({"job_ids": ids, "timeout_secs": 30}))
            .await;
        if structured(&waited)["unfinished"] == 0 || std::time::Instant::now() > deadline {
            break waited;
        }
    };
    let jobs = structured(&waited)["jobs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(jobs.len(), 2, "{waited:#}");
    let sessions: Vec<&Value> = jobs.iter().map(|job| &job["session_id"]).collect();
    assert!(
        sessions.iter().all(|id| id.is_string() && **id != session) && sessions[0] != sessions[1],
        "{waited:#}"
    );
    for answer in ["first-fork", "second-fork"] {
        let seen = mock.requests_with(agent, &format!("ANSWER: {answer}"));
        assert!(
            seen.iter()
                .any(|r| r["history"].to_string().contains("remember-the-alpaca")),
            "{answer} did not start from the session: {seen:#?}"
        );
    }
}

/// A second call through the server resumes the first one's session.
async fn resume_through_the_server(
    mock: &MockModel,
    server: &mut Server,
    agent: Agent,
    first: &Value,
) {
    let tool = agent.name();
    let session = structured(first)["session_id"]
        .as_str()
        .expect("a session id")
        .to_owned();

    let second = server
        .call(
            tool,
            json!({"prompt": "ANSWER: second-through-mcp", "session_id": session}),
        )
        .await;
    assert_completed(&second);
    assert_eq!(structured(&second)["session_id"], session.as_str());
    assert!(
        mock.requests_with(agent, "second-through-mcp")
            .iter()
            .any(|request| request["history"].to_string().contains("first-through-mcp")),
        "the resumed call did not carry the first turn: {:#?}",
        mock.requests()
    );
}
