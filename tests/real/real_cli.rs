//! The real CLIs, end to end, against the mock model server: through the engine and
//! through `cli-agent-mcp run`. Each test starts its own mock and sandbox, so they run in
//! parallel. A CLI that is not installed skips locally and fails in CI (see tests/real).

use crate::common;
use crate::real;

use std::process::Stdio;
use std::time::Duration;

use cli_agent_engine::{Agent, ErrorKind, Outcome, RunRequest, Status, clis};
use common::wait_until;
use real::{MockModel, Retries, Sandbox, closed_port, run};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A sandbox for `agent` pointed at a fresh mock, with the fast-failure retry settings.
pub(crate) fn setup(agent: Agent) -> Option<(MockModel, Sandbox)> {
    let bin = real::installed(agent)?;
    let mock = MockModel::start();
    let sandbox = Sandbox::new(agent, &bin, mock.port, Retries::Shortened);
    Some((mock, sandbox))
}

async fn run_prompt(sandbox: &Sandbox, prompt: &str) -> Outcome {
    run(sandbox, sandbox.request(prompt), CancellationToken::new())
        .await
        .0
}

fn assert_completed(outcome: &Outcome) {
    assert_eq!(outcome.status, Status::Completed, "{outcome:#?}");
    assert!(outcome.error.is_none(), "{outcome:#?}");
}

async fn plain_prompt_returns_answer_session_and_usage(agent: Agent) {
    let Some((_mock, sandbox)) = setup(agent) else {
        return;
    };
    let outcome = run_prompt(&sandbox, "say hello").await;
    assert_completed(&outcome);
    assert_eq!(
        outcome.answer.trim(),
        "hello from fake model",
        "{outcome:#?}"
    );
    // A CLI that cannot resume (cline) names no session: the outcome says none.
    let resumes = agent.cli().resumes().is_ok();
    assert_eq!(
        outcome
            .session_id
            .as_deref()
            .is_some_and(|id| !id.is_empty()),
        resumes,
        "{outcome:#?}"
    );
    let usage = outcome.usage.expect("usage is reported");
    assert!(usage.input_tokens >= 100, "{usage:?}");
    assert!(usage.output_tokens >= 7, "{usage:?}");
    sandbox.assert_nothing_left();
}

/// A CLI that cannot resume refuses a `session_id`, naming why, before it starts.
async fn a_session_id_is_refused_before_the_cli_starts(sandbox: &Sandbox) {
    let mut request = sandbox.request("ANSWER: never-sent");
    request.session_id = Some("an-earlier-session".to_owned());
    let error = sandbox
        .engine()
        .prepare(sandbox.agent, request)
        .expect_err("a session_id is refused");
    assert!(
        error.to_string().contains("cannot take `session_id`"),
        "{error}"
    );
}

async fn resume_continues_the_session(agent: Agent) {
    let Some((mock, sandbox)) = setup(agent) else {
        return;
    };
    if agent.cli().resumes().is_err() {
        return a_session_id_is_refused_before_the_cli_starts(&sandbox).await;
    }
    // One engine for both turns: it keeps what a CLI with cumulative usage reported before.
    let engine = sandbox.engine();
    let request = sandbox.request("ANSWER: remember-the-alpaca");
    let (first, _) = real::run_on(&engine, sandbox.agent, request, CancellationToken::new()).await;
    assert_completed(&first);
    assert_eq!(first.answer.trim(), "remember-the-alpaca");
    let mut request = sandbox.request("ANSWER: second-turn");
    request.session_id = first.session_id.clone();
    let (second, _) = real::run_on(&engine, sandbox.agent, request, CancellationToken::new()).await;
    assert_completed(&second);
    assert_eq!(second.answer.trim(), "second-turn");
    assert_eq!(second.session_id, first.session_id);
    if agent.cli().usage_is_cumulative() {
        // One model request per turn: the resumed turn alone, not the session so far.
        let input = |outcome: &Outcome| outcome.usage.map(|usage| usage.input_tokens);
        assert_eq!(input(&second), input(&first), "{second:#?}");
    }
    let resumed = mock.requests_with(agent, "second-turn");
    assert!(
        resumed.iter().any(|request| request["history"]
            .to_string()
            .contains("remember-the-alpaca")),
        "the resumed turn did not carry the first one: {resumed:#?}"
    );
}

async fn read_only_refuses_a_write(agent: Agent) {
    let Some((mock, sandbox)) = setup(agent) else {
        return;
    };
    let prompt = "RUN_SHELL: touch made-by-agent";
    let outcome = run_prompt(&sandbox, prompt).await;
    assert_ne!(outcome.status, Status::Cancelled, "{outcome:#?}");
    // The model asked for the tool and got its refusal back: a second model request.
    assert!(
        mock.requests_with(agent, prompt).len() >= 2,
        "{:#?}",
        mock.requests()
    );
    assert!(
        !sandbox.workspace.join("made-by-agent").exists(),
        "read-only let {agent} write: {outcome:#?}"
    );
}

async fn reasoning_is_extracted(agent: Agent) {
    let Some((_mock, sandbox)) = setup(agent) else {
        return;
    };
    let outcome = run_prompt(&sandbox, "THINK then say hello").await;
    assert_completed(&outcome);
    assert_eq!(outcome.answer.trim(), "hello from fake model");
    match agent.name() {
        // gemini's stream-json drops thought parts: there is nothing to extract.
        "gemini" => assert_eq!(outcome.reasoning, None),
        _ => assert!(
            outcome
                .reasoning
                .as_deref()
                .is_some_and(|text| text.contains("about the answer")),
            "{outcome:#?}"
        ),
    }
}

/// Start `request` in the background, cancel it once `ready` holds, and return its outcome.
async fn cancel_when(
    sandbox: &Sandbox,
    request: RunRequest,
    what: &str,
    ready: impl FnMut() -> bool,
) -> Outcome {
    let cancel = CancellationToken::new();
    let (engine, agent) = (sandbox.engine(), sandbox.agent);
    let handle = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            common::adopt_orphans();
            engine
                .run(agent, request, cancel, &mut |_: &_| {})
                .await
                .expect("the run starts")
        }
    });
    wait_until(what, ready).await;
    cancel.cancel();
    tokio::time::timeout(real::RUN_DEADLINE, handle)
        .await
        .expect("the cancelled run ends")
        .expect("the run task")
}

async fn slow_stream_cancelled_midway_leaves_nothing(agent: Agent) {
    let Some((mock, sandbox)) = setup(agent) else {
        return;
    };
    let prompt = "SLOW: 120";
    let outcome = cancel_when(
        &sandbox,
        sandbox.request(prompt),
        "the slow stream begins",
        || {
            mock.requests_with(agent, prompt)
                .iter()
                .any(|request| request["scenario"].to_string().contains("slow"))
        },
    )
    .await;
    assert_eq!(outcome.status, Status::Cancelled, "{outcome:#?}");
    sandbox.assert_nothing_left();
}

async fn cancel_while_the_shell_tool_sleeps_leaves_nothing(agent: Agent) {
    let Some((_mock, sandbox)) = setup(agent) else {
        return;
    };
    let mut request = sandbox.request(&real::sleep_prompt(agent, 477));
    request.permission = real::shell_permission(agent);
    let outcome = cancel_when(&sandbox, request, "the tool's `sleep 477` runs", || {
        sandbox.runs(&["sleep", "477"])
    })
    .await;
    assert_eq!(outcome.status, Status::Cancelled, "{outcome:#?}");
    sandbox.assert_nothing_left();
}

/// What a scripted failure must become: the status, the error kind, a word of the hint.
async fn fails_with(agent: Agent, prompt: &str, kind: ErrorKind, hint_word: &str) {
    let Some((_mock, sandbox)) = setup(agent) else {
        return;
    };
    let outcome = run_prompt(&sandbox, prompt).await;
    assert_failed_as(&outcome, kind, hint_word);
    sandbox.assert_nothing_left();
}

fn assert_failed_as(outcome: &Outcome, kind: ErrorKind, hint_word: &str) {
    assert_eq!(outcome.status, Status::Failed, "{outcome:#?}");
    let error = outcome.error.as_ref().expect("an error");
    assert_eq!(error.kind, kind, "{outcome:#?}");
    assert!(!error.message.is_empty(), "{outcome:#?}");
    assert!(
        error
            .hint
            .as_deref()
            .is_some_and(|hint| hint.contains(hint_word)),
        "{outcome:#?}"
    );
}

async fn http_401_fails_with_an_auth_hint(agent: Agent) {
    fails_with(agent, "FAIL_401", ErrorKind::Authentication, "API key").await;
}

async fn http_429_fails_as_rate_limited(agent: Agent) {
    fails_with(agent, "FAIL_429", ErrorKind::RateLimited, "wait").await;
}

async fn http_500_fails_as_a_server_error(agent: Agent) {
    fails_with(agent, "FAIL_500", ErrorKind::ServerError, "retry").await;
}

async fn cut_stream_fails_or_is_recovered(agent: Agent) {
    let Some((_mock, sandbox)) = setup(agent) else {
        return;
    };
    let outcome = run_prompt(&sandbox, "DROP").await;
    if agent == clis::CLAUDE {
        // claude silently repeats the request without streaming, and that one succeeds.
        assert_completed(&outcome);
        assert_eq!(outcome.answer.trim(), "hello from fake model");
    } else {
        assert_failed_as(&outcome, ErrorKind::StreamCut, "retry");
    }
    sandbox.assert_nothing_left();
}

async fn refused_connection_fails_with_a_connection_hint(agent: Agent) {
    let Some(bin) = real::installed(agent) else {
        return;
    };
    let sandbox = Sandbox::new(agent, &bin, closed_port(), Retries::Shortened);
    let outcome = run_prompt(&sandbox, "say hello").await;
    assert_failed_as(&outcome, ErrorKind::Connection, "network");
    sandbox.assert_nothing_left();
}

/// `cli-agent-mcp run --json` with the sandbox's CLI; the parsed Outcome.
fn cam_run(sandbox: &Sandbox, prompt: &str, extra: &[&str]) -> Value {
    let agent = sandbox.agent;
    let output = common::cam_command()
        .envs(sandbox.env().iter().map(|(key, value)| (key, value)))
        .env(agent.env_var("BIN"), &sandbox.wrapper)
        .env("IS_SANDBOX", "1")
        .env("CAM_STATE_DIR", std::env::temp_dir().join("cam-test-state"))
        .args(["run", agent.name(), prompt, "--json", "--workspace"])
        .arg(&sandbox.workspace)
        .arg(format!("--timeout-secs={}", real::RUN_DEADLINE.as_secs()))
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("run cli-agent-mcp");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "`run --json` printed no outcome ({error}); stderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

async fn run_command_resumes_and_runs_the_shell_under_unlimited(agent: Agent) {
    let Some((mock, sandbox)) = setup(agent) else {
        return;
    };
    let first = cam_run(&sandbox, "ANSWER: first-via-run", &[]);
    assert_eq!(first["status"], "completed", "{first:#}");
    // A CLI that cannot resume runs the shell in a session of its own.
    let session = first["session_id"].as_str().map(str::to_owned);
    assert_eq!(
        session.is_some(),
        agent.cli().resumes().is_ok(),
        "{first:#}"
    );
    let mut args = vec!["--permission", "unlimited"];
    if let Some(session) = &session {
        args.extend(["--session-id", session.as_str()]);
    }
    let prompt = "RUN_SHELL: touch made-by-agent && echo tool-ran-here";
    let second = cam_run(&sandbox, prompt, &args);
    assert_eq!(second["status"], "completed", "{second:#}");
    if let Some(session) = &session {
        assert_eq!(second["session_id"], session.as_str(), "{second:#}");
    }
    let answer = second["answer"].as_str().unwrap_or_default();
    assert!(
        answer.contains("tool said") && answer.contains("tool-ran-here"),
        "{second:#}"
    );
    assert!(second["tools"]["calls"].as_u64() >= Some(1), "{second:#}");
    assert!(sandbox.workspace.join("made-by-agent").exists());
    let carried = mock
        .requests_with(agent, "tool-ran-here")
        .iter()
        .any(|request| request["history"].to_string().contains("first-via-run"));
    assert_eq!(carried, session.is_some(), "{:#?}", mock.requests());
}

async fn default_retries_still_end_at_the_engine_deadline(agent: Agent) {
    let Some(bin) = real::installed(agent) else {
        return;
    };
    let sandbox = Sandbox::new(agent, &bin, closed_port(), Retries::Defaults);
    let mut request = sandbox.request("say hello");
    request.timeout = Some(Duration::from_secs(8));
    let (outcome, _) = run(&sandbox, request, CancellationToken::new()).await;
    assert_eq!(outcome.status, Status::TimedOut, "{outcome:#?}");
    sandbox.assert_nothing_left();
}

/// Every scenario above, for every CLI of the registry (see [`real::for_every_cli`]).
macro_rules! for_every_cli {
    ($($scenario:ident),* $(,)?) => {
        mod every_cli {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    crate::real::for_every_cli(super::$scenario).await;
                }
            )*
        }
    };
}

for_every_cli![
    plain_prompt_returns_answer_session_and_usage,
    resume_continues_the_session,
    read_only_refuses_a_write,
    reasoning_is_extracted,
    slow_stream_cancelled_midway_leaves_nothing,
    cancel_while_the_shell_tool_sleeps_leaves_nothing,
    http_401_fails_with_an_auth_hint,
    http_429_fails_as_rate_limited,
    http_500_fails_as_a_server_error,
    cut_stream_fails_or_is_recovered,
    refused_connection_fails_with_a_connection_hint,
    run_command_resumes_and_runs_the_shell_under_unlimited,
];

/// codex retries a refused connection forever by default: only the engine's deadline ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_default_retries_end_at_the_engine_deadline() {
    default_retries_still_end_at_the_engine_deadline(clis::CODEX).await;
}

/// qwen at read-only refuses a write even when the user's own settings allow its shell and
/// edits and ask for yolo: plan mode holds where `default` would run the allowed shell.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_read_only_holds_against_a_users_allow_rules() {
    let Some((_mock, sandbox)) = setup(clis::QWEN) else {
        return;
    };
    let file = sandbox.root().join("qwen/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("qwen settings"))
            .expect("settings JSON");
    settings["permissions"] =
        serde_json::json!({ "allow": ["run_shell_command", "write_file", "edit"] });
    settings["tools"] = serde_json::json!({ "approvalMode": "yolo" });
    std::fs::write(&file, settings.to_string()).expect("write qwen settings");
    let outcome = run_prompt(&sandbox, "RUN_SHELL: touch made-by-agent").await;
    assert_completed(&outcome);
    assert_eq!(outcome.tools.failed, 1, "{outcome:#?}");
    assert!(
        !sandbox.workspace.join("made-by-agent").exists(),
        "read-only let qwen write: {outcome:#?}"
    );
}

/// cline at read-only refuses a write by its own plan mode, with the kernel sandbox off: the
/// shell call is made, refused by cline, and the file is not there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cline_read_only_plan_mode_refuses_a_write_without_the_kernel_sandbox() {
    let Some(bin) = real::installed(Agent::builtin(cline())) else {
        return;
    };
    let mock = MockModel::start();
    let sandbox = Sandbox::new(Agent::builtin(cline()), &bin, mock.port, Retries::Shortened);
    let engine = cli_agent_engine::Engine::new(cli_agent_engine::EngineConfig {
        binaries: [("cline".to_owned(), sandbox.wrapper.clone())]
            .into_iter()
            .collect(),
        sandbox: cli_agent_engine::sandbox::SandboxMode::Off,
        ..cli_agent_engine::EngineConfig::default()
    });
    let request = sandbox.request("RUN_SHELL: touch made-by-agent");
    let (outcome, _) =
        real::run_on(&engine, sandbox.agent, request, CancellationToken::new()).await;
    assert_completed(&outcome);
    assert_eq!(outcome.tools.calls, 1, "{outcome:#?}");
    assert_eq!(outcome.tools.failed, 1, "{outcome:#?}");
    assert!(
        !sandbox.workspace.join("made-by-agent").exists(),
        "cline's plan mode let it write: {outcome:#?}"
    );
}

fn cline() -> &'static dyn clis::Cli {
    clis::builtin("cline").expect("cline is a built-in CLI")
}
