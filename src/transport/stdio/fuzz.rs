//! The server's input under generated garbage, below the transport: a tool call's arguments
//! ([`call_request`], within a [`Policy`]) and a line of the MCP channel ([`inbound::classify`]). Neither
//! panics; a bad argument is an [`ArgsError`](crate::mcp::tools::ArgsError) with a message, and
//! every request gets an answer that carries its id. Lines are seeded from the hand-picked
//! `tests/fixtures/fuzz/mcp.jsonl`; failures are saved next to it and replayed.
//! `PROPTEST_CASES=100000 cargo test --release --bin cli-agent-mcp fuzz` for a long run.

use cli_agent_test_support::fuzz as support;

use std::time::Duration;

use cli_agent_engine::process::Line;
use cli_agent_engine::{Agent, Permission};
use proptest::prelude::*;
use proptest::sample::Index;
use rmcp::model::JsonObject;
use serde_json::{Value, json};

use super::inbound::{Inbound, classify};
use crate::mcp::policy::Policy;
use crate::mcp::tools::{ToolArgs, call_request};

/// Every argument a tool takes, from the schema clients see.
fn fields() -> Vec<String> {
    let schema = schemars::schema_for!(ToolArgs);
    let properties = schema.get("properties").and_then(Value::as_object);
    properties
        .expect("ToolArgs has properties")
        .keys()
        .cloned()
        .collect()
}

fn agent() -> impl Strategy<Value = Agent> {
    proptest::sample::select(cli_agent_engine::clis::builtin_agents().collect::<Vec<_>>())
}

/// Calls may use the test's directory (the default workspace) and ask for anything.
fn policy() -> Policy {
    let here = std::env::current_dir().expect("current dir");
    Policy::new(&[here], Permission::Unlimited).expect("policy")
}

/// Arguments a client may send: known fields with values of any type, and strangers.
fn any_arguments() -> impl Strategy<Value = JsonObject> {
    let field = prop_oneof![
        4 => proptest::sample::select(fields()),
        1 => "[a-z_]{1,12}",
    ];
    prop::collection::vec((field, support::hostile_value()), 0..8)
        .prop_map(|pairs| pairs.into_iter().collect())
}

/// Arguments that are right for `agent`, every optional field present or not.
fn valid_arguments(agent: Agent) -> impl Strategy<Value = JsonObject> {
    let permission = proptest::sample::select(vec!["read-only", "workspace-write", "unlimited"]);
    (
        any::<String>(),
        proptest::option::of(permission),
        proptest::option::of(any::<String>()),
        proptest::option::of(1u64..=u64::MAX),
        proptest::option::of(any::<String>()),
    )
        .prop_map(move |(prompt, permission, model, timeout, extra)| {
            let mut args = JsonObject::new();
            args.insert("prompt".into(), json!(prompt));
            let optional = [
                ("permission", permission.map(|p| json!(p))),
                ("model", model.map(|m| json!(m))),
                ("timeout_secs", timeout.map(|t| json!(t))),
                (
                    "append_system_prompt",
                    extra
                        .filter(|_| agent == cli_agent_engine::clis::CLAUDE)
                        .map(|e| json!(e)),
                ),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    args.insert(key.into(), value);
                }
            }
            args
        })
}

/// A JSON-RPC request with any id this server can echo, a method, and any params.
fn request() -> impl Strategy<Value = (Value, Value)> {
    let id = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<String>().prop_map(Value::from)
    ];
    let method = prop_oneof![
        proptest::sample::select(vec![
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "server/discover"
        ])
        .prop_map(str::to_owned),
        any::<String>(),
    ];
    (id, method, proptest::option::of(support::hostile_value())).prop_map(|(id, method, params)| {
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            request["params"] = params;
        }
        (id, request)
    })
}

/// A hand-picked line of the corpus, cut, spliced into or flipped somewhere.
fn mutated_line() -> impl Strategy<Value = Vec<u8>> {
    let corpus = std::fs::read(support::fixtures().join("fuzz/mcp.jsonl")).expect("mcp corpus");
    let lines: Vec<Vec<u8>> = corpus.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    (
        proptest::sample::select(lines),
        any::<Index>(),
        prop::collection::vec(any::<u8>(), 0..8),
        any::<Index>(),
    )
        .prop_map(|(mut line, at, insert, cut)| {
            let at = at.index(line.len() + 1);
            line.splice(at..at, insert);
            let cut = cut.index(line.len() + 1);
            if cut % 3 == 0 {
                line.truncate(cut);
            }
            line.retain(|&b| b != b'\n');
            line
        })
}

/// Classify a line and check what every answer owes the client.
fn answer_to(line: &[u8]) -> Option<Value> {
    match classify(Line::Complete(line)) {
        Inbound::Refused(answer) => {
            let text = serde_json::to_string(&answer).expect("an answer serializes");
            assert!(!text.contains('\n'), "an answer must be one line: {text}");
            let answer: Value = serde_json::from_str(&text).expect("json");
            assert_eq!(answer["jsonrpc"], "2.0");
            let code = answer["error"]["code"].as_i64().expect("an error code");
            assert!([-32700, -32600, -32602].contains(&code), "{answer}");
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.len() > 20,
                "an answer must say what was wrong: {answer}"
            );
            Some(answer)
        }
        Inbound::Message(_) | Inbound::Ignored(_) | Inbound::Blank => None,
    }
}

proptest! {
    #![proptest_config(support::config("mcp", 500))]

    #[test]
    fn any_arguments_give_a_request_or_an_error_that_says_why(
        agent in agent(),
        arguments in proptest::option::of(any_arguments()),
    ) {
        if let Err(error) = call_request(agent, arguments, &policy()) {
            prop_assert!(error.to_string().len() > 20, "{error}");
        }
    }

    #[test]
    fn valid_arguments_reach_the_request_as_given(
        (agent, arguments) in agent().prop_flat_map(|agent| (Just(agent), valid_arguments(agent)))
    ) {
        let request = call_request(agent, Some(arguments.clone()), &policy())
            .map_err(|error| TestCaseError::fail(format!("{error}: {arguments:?}")))?
            .run;
        prop_assert_eq!(Value::String(request.prompt), arguments["prompt"].clone());
        let permission = arguments.get("permission").and_then(Value::as_str).unwrap_or("read-only");
        let expected: Permission = serde_json::from_value(json!(permission)).expect("permission");
        prop_assert_eq!(request.permission, expected);
        let timeout = arguments.get("timeout_secs").and_then(Value::as_u64);
        prop_assert_eq!(request.timeout, timeout.map(Duration::from_secs));
    }

    #[test]
    fn any_bytes_are_a_message_or_an_answer_that_says_why(line in prop_oneof![
        mutated_line(),
        prop::collection::vec(any::<u8>(), 0..200),
        support::hostile_value().prop_map(|value| value.to_string().into_bytes()),
    ]) {
        answer_to(&line);
    }

    #[test]
    fn every_request_is_passed_on_or_answered_with_its_id((id, request) in request()) {
        let line = request.to_string();
        match classify(Line::Complete(line.as_bytes())) {
            Inbound::Message(_) => {}
            Inbound::Refused(_) => {
                let answer = answer_to(line.as_bytes()).expect("an answer");
                prop_assert_eq!(&answer["id"], &id, "{}", answer);
            }
            other => prop_assert!(false, "a request got no answer: {other:?} for {line}"),
        }
    }

    #[test]
    fn a_notification_is_never_answered(method in any::<String>(), params in support::hostile_value()) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        prop_assert!(answer_to(line.as_bytes()).is_none(), "{line}");
    }
}

#[test]
fn every_line_of_the_corpus_is_a_message_or_an_answer_that_says_why() {
    let corpus = std::fs::read(support::fixtures().join("fuzz/mcp.jsonl")).expect("mcp corpus");
    let lines: Vec<&[u8]> = corpus.split(|&b| b == b'\n').collect();
    assert!(lines.len() > 50, "the MCP corpus is missing");
    let answered = lines
        .iter()
        .filter(|line| answer_to(line).is_some())
        .count();
    assert!(answered > 20, "only {answered} corpus lines were answered");
}
