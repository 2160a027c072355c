//! `fork` and `effort` through the real CLIs against the mock model: a fork starts from its
//! session's context under an id of its own, leaving the session as it was; an effort reaches
//! the CLI's command line and, where the CLI sends it, the model's request.

use crate::real;

use crate::real_cli::setup;
use cli_agent_engine::{Agent, Effort, Engine, Outcome, Status};
use real::{MockModel, Sandbox};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// One completed turn of `prompt`, resuming (or forking) `session` if given.
async fn turn(
    engine: &Engine,
    sandbox: &Sandbox,
    prompt: &str,
    session: Option<&Outcome>,
    fork: bool,
) -> Outcome {
    let mut request = sandbox.request(prompt);
    request.session_id = session.and_then(|outcome| outcome.session_id.clone());
    request.fork = fork;
    let (outcome, _) = real::run_on(engine, sandbox.agent, request, CancellationToken::new()).await;
    assert_eq!(outcome.status, Status::Completed, "{prompt}: {outcome:#?}");
    outcome
}

/// The earlier turns the model was shown with the turn that asked for `answer`.
fn history(mock: &MockModel, agent: Agent, answer: &str) -> String {
    let requests = mock.requests_with(agent, &format!("ANSWER: {answer}"));
    assert!(!requests.is_empty(), "no request asked for {answer}");
    let histories: Vec<String> = requests.iter().map(|r| r["history"].to_string()).collect();
    histories.join("\n")
}

/// Two forks of one session each answer from its context under ids of their own, and the
/// session, resumed afterwards, has seen neither.
async fn two_forks_branch_from_one_session(agent: Agent) {
    if agent.cli().forks().is_err() {
        return;
    }
    let Some((mock, sandbox)) = setup(agent) else {
        return;
    };
    let engine = sandbox.engine();
    let original = turn(
        &engine,
        &sandbox,
        "ANSWER: remember-the-alpaca",
        None,
        false,
    )
    .await;
    let one = turn(
        &engine,
        &sandbox,
        "ANSWER: first-fork",
        Some(&original),
        true,
    )
    .await;
    let two = turn(
        &engine,
        &sandbox,
        "ANSWER: second-fork",
        Some(&original),
        true,
    )
    .await;
    let back = turn(
        &engine,
        &sandbox,
        "ANSWER: back-home",
        Some(&original),
        false,
    )
    .await;
    assert_eq!(
        [&one, &two, &back].map(|outcome| outcome.answer.trim().to_owned()),
        ["first-fork", "second-fork", "back-home"]
    );
    let ids = [&original, &one, &two].map(|outcome| outcome.session_id.clone());
    assert!(ids.iter().all(Option::is_some), "{ids:?}");
    assert!(
        ids[0] != ids[1] && ids[0] != ids[2] && ids[1] != ids[2],
        "{ids:?}"
    );
    assert_eq!(back.session_id, original.session_id);
    if agent.cli().usage_is_cumulative() {
        // One model request per turn: a fork's usage is its own, not its session's so far.
        let input = |outcome: &Outcome| outcome.usage.map(|usage| usage.input_tokens);
        assert_eq!(input(&one), input(&original), "{one:#?}");
        assert_eq!(input(&two), input(&original), "{two:#?}");
    }

    for (answer, other) in [("first-fork", "second-fork"), ("second-fork", "first-fork")] {
        let seen = history(&mock, agent, answer);
        assert!(seen.contains("remember-the-alpaca"), "{answer}: {seen}");
        assert!(!seen.contains(other), "{answer} saw {other}: {seen}");
    }
    let seen = history(&mock, agent, "back-home");
    assert!(seen.contains("remember-the-alpaca"), "{seen}");
    assert!(
        !seen.contains("first-fork") && !seen.contains("second-fork"),
        "a fork changed the original session: {seen}"
    );
    sandbox.assert_nothing_left();
}

/// Where the model's request carries the effort, by CLI: its field and the value `high` is.
fn effort_in_request(agent: Agent) -> Option<(&'static str, &'static str)> {
    match agent.name() {
        "claude" => Some(("/output_config/effort", "high")),
        "codex" => Some(("/reasoning/effort", "high")),
        "opencode" | "copilot" | "cline" => Some(("/reasoning_effort", "high")),
        // pi on Anthropic's API turns a thinking level into a thinking budget.
        "pi" => Some(("/thinking/type", "enabled")),
        _ => None,
    }
}

/// `effort` reaches the real CLI's command line as it spells it, and the model's request
/// where the CLI sends one; a CLI without the notion refuses it before starting.
async fn effort_reaches_the_cli_and_the_model(agent: Agent) {
    let Some((mock, sandbox)) = setup(agent) else {
        return;
    };
    let (engine, agent) = (sandbox.engine(), sandbox.agent);
    let mut request = sandbox.request("ANSWER: with-effort");
    request.effort = Some(Effort::High);
    let Ok(words) = agent.cli().effort_option(Effort::High) else {
        let error = engine.prepare(agent, request).expect_err("refused");
        assert!(
            error.to_string().contains("cannot take `effort`"),
            "{error}"
        );
        return;
    };
    let prepared = engine.prepare(agent, request.clone()).expect("prepared");
    assert!(
        prepared
            .command_line()
            .args
            .windows(words.len())
            .any(|run| run == words.as_slice()),
        "{prepared:?}"
    );
    let (outcome, _) = real::run_on(&engine, agent, request, CancellationToken::new()).await;
    assert_eq!(outcome.status, Status::Completed, "{outcome:#?}");
    assert_eq!(outcome.answer.trim(), "with-effort");
    let bodies: Vec<Value> = mock
        .requests_with(agent, "with-effort")
        .into_iter()
        .map(|request| request["body"].clone())
        .collect();
    if let Some((field, value)) = effort_in_request(agent) {
        assert!(
            bodies
                .iter()
                .any(|body| body.pointer(field) == Some(&Value::from(value))),
            "no {field} = {value} in {bodies:#?}"
        );
    }
    sandbox.assert_nothing_left();
}

mod every_cli {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_forks_branch_from_one_session() {
        crate::real::for_every_cli(super::two_forks_branch_from_one_session).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn effort_reaches_the_cli_and_the_model() {
        crate::real::for_every_cli(super::effort_reaches_the_cli_and_the_model).await;
    }
}
