//! The parsers against what the pinned CLI versions really print: the golden captures in
//! `tests/fixtures/captures/<cli>/<scenario>.jsonl`, made by `scripts/regen-captures.sh` from
//! the real CLIs run against the mock model server. Every line must be understood, and each
//! scenario must come out as the engine needs it.

use super::json::{last_usage, parse_all, terminal, texts};
use crate::agent::Agent;
use crate::clis::{CLAUDE, COPILOT, GEMINI};
use crate::event::AgentEvent;
use crate::outcome::ErrorKind;

/// What a scenario must parse into.
#[derive(Debug)]
enum Expect {
    /// A completed turn whose answer contains this text.
    Completed(&'static str),
    /// A failed turn that the engine classifies as this kind.
    Failed(ErrorKind),
    /// Interrupted by SIGINT: no success and no failure (claude reports an abort).
    Interrupted,
}

/// The scenarios every CLI has a capture of.
const SCENARIOS: [&str; 11] = [
    "plain",
    "reasoning",
    "tool_call",
    "resume",
    "error_400",
    "error_401",
    "error_429",
    "error_500",
    "stream_cut",
    "connection_refused",
    "cancelled",
];

fn capture(cli: &str, scenario: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/captures")
        .join(cli)
        .join(format!("{scenario}.jsonl"));
    std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "{}: {error}; scripts/regen-captures.sh makes it",
            path.display()
        )
    })
}

fn expectation(agent: Agent, scenario: &str) -> Expect {
    match scenario {
        "plain" | "reasoning" => Expect::Completed("hello from fake model"),
        "tool_call" => Expect::Completed("captured-tool-output"),
        "resume" => Expect::Completed("second turn"),
        "error_400" => Expect::Failed(ErrorKind::BadRequest),
        "error_401" => Expect::Failed(ErrorKind::Authentication),
        "error_429" => Expect::Failed(ErrorKind::RateLimited),
        "error_500" => Expect::Failed(ErrorKind::ServerError),
        // claude repeats a cut request without streaming, and that one succeeds.
        "stream_cut" if agent == CLAUDE => Expect::Completed("hello from fake model"),
        "stream_cut" => Expect::Failed(ErrorKind::StreamCut),
        "connection_refused" => Expect::Failed(ErrorKind::Connection),
        "cancelled" => Expect::Interrupted,
        other => panic!("no expectation for scenario {other}"),
    }
}

/// The answer as the transcript assembles it: the CLI's final answer, else its text.
fn answer(events: &[AgentEvent]) -> String {
    let given = events.iter().find_map(|event| match event {
        AgentEvent::TurnCompleted { answer } => answer.clone(),
        _ => None,
    });
    given.unwrap_or_else(|| texts(events).concat())
}

fn check(agent: Agent, scenario: &str, stream: &str) {
    let context = format!("{agent}/{scenario}");
    assert!(!stream.trim().is_empty(), "{context}: the capture is empty");
    let (events, issues) = parse_all(&mut *agent.cli().dialect(), stream);
    assert_eq!(issues, [], "{context}: lines the parser did not understand");
    // A CLI that cannot resume (cline) names no session.
    assert_eq!(
        events
            .iter()
            .any(|event| matches!(event, AgentEvent::SessionStarted { .. })),
        agent.cli().resumes().is_ok(),
        "{context}: session ids in {events:#?}"
    );
    let terminal = terminal(&events);
    match expectation(agent, scenario) {
        Expect::Completed(text) => {
            assert!(
                matches!(terminal.first(), Some(AgentEvent::TurnCompleted { .. })),
                "{context}: {terminal:#?}"
            );
            assert!(answer(&events).contains(text), "{context}: {events:#?}");
        }
        Expect::Failed(kind) => match terminal.first() {
            Some(AgentEvent::TurnFailed {
                message,
                http_status,
            }) => assert_eq!(
                ErrorKind::classify(agent.cli(), *http_status, message),
                kind,
                "{context}: {message:?} (status {http_status:?})"
            ),
            other => panic!("{context}: expected a failure, got {other:#?}"),
        },
        Expect::Interrupted => assert!(
            terminal
                .iter()
                .all(|event| matches!(event, AgentEvent::TurnAborted { .. })),
            "{context}: {terminal:#?}"
        ),
    }
    check_details(agent, scenario, &events, &context);
}

/// What particular scenarios must also carry: usage, reasoning, the tool call.
fn check_details(agent: Agent, scenario: &str, events: &[AgentEvent], context: &str) {
    match scenario {
        // copilot prints no token counts on stdout.
        "plain" if agent != COPILOT => {
            let usage = last_usage(events).unwrap_or_else(|| panic!("{context}: no usage"));
            assert!(usage.input_tokens >= 100, "{context}: {usage:?}");
            assert!(usage.output_tokens >= 7, "{context}: {usage:?}");
        }
        // gemini's stream-json drops thought parts.
        "reasoning" if agent != GEMINI => assert!(
            events.iter().any(|event| matches!(
                event,
                AgentEvent::Reasoning { text } if text.contains("about the answer")
            )),
            "{context}: no reasoning in {events:#?}"
        ),
        "tool_call" => {
            assert!(
                events
                    .iter()
                    .any(|event| matches!(event, AgentEvent::ToolFinished { success: true, .. })),
                "{context}: no finished tool in {events:#?}"
            );
        }
        _ => {}
    }
}

#[test]
fn every_clis_captures_parse_into_the_expected_outcomes() {
    for agent in crate::clis::builtin_agents() {
        // A CLI that cannot resume (cline) has no resumed session to capture.
        let resumes = agent.cli().resumes().is_ok();
        for scenario in SCENARIOS.into_iter().filter(|s| resumes || *s != "resume") {
            check(agent, scenario, &capture(agent.name(), scenario));
        }
    }
}
