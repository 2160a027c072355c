//! The dialect parsers under generated and mutated input: whatever a CLI prints, a parser
//! never panics or hangs, and a line it cannot use comes back as a [`LineIssue`] (a warning
//! of the run), never as silence about text that was not JSON.
//!
//! Inputs are seeded from the golden captures (`tests/fixtures/captures/<cli>/*.jsonl`) and
//! the hand-picked lines of `tests/fixtures/fuzz/dialects.jsonl`, then mutated: a JSON node replaced
//! by a value of another type, a key dropped or added, bytes flipped, cut or inserted, lines
//! spliced. Whole streams go through one parser, since parsers keep state between lines.
//! Failures are saved in `tests/fixtures/fuzz/dialects.proptest-regressions` and replayed.
//! `PROPTEST_CASES=100000 cargo test -p cli-agent-engine --release --test fuzz_dialects` for
//! a long run.

use crate::fuzz;

use cli_agent_engine::dialect::{Dialect, LineIssue};
use cli_agent_engine::{Agent, clis};
use proptest::prelude::*;
use proptest::sample::Index;
use serde::de::IgnoredAny;
use serde_json::Value;

/// The capture lines of `agent` followed by every nasty line.
fn seeds(agent: Agent) -> Vec<String> {
    let mut lines = fuzz::jsonl_dir_lines(&fuzz::fixtures().join("captures").join(agent.name()));
    assert!(!lines.is_empty(), "no captures for {agent}");
    lines.extend(nasty());
    lines
}

/// The hand-picked lines every parser must survive.
fn nasty() -> Vec<String> {
    fuzz::jsonl_lines(&fuzz::fixtures().join("fuzz/dialects.jsonl"))
}

/// Parse one line and check what any parser owes its caller.
fn check_line(dialect: &mut dyn Dialect, line: &str) {
    let mut events = Vec::new();
    match dialect.parse_line(line, &mut events) {
        Ok(()) => {
            if line.trim().is_empty() {
                assert!(events.is_empty(), "a blank line gave events: {events:?}");
            } else {
                // JSON as the parsers read it: any depth, numbers of any size.
                assert!(
                    serde_json::from_str::<IgnoredAny>(line).is_ok(),
                    "a line that is not JSON was taken without an issue: {line:?} gave {events:?}"
                );
            }
        }
        Err(LineIssue::Malformed { reason, .. }) => {
            assert!(
                !reason.trim().is_empty(),
                "a malformed line without a reason: {line:?}"
            );
        }
        Err(LineIssue::NotJson | LineIssue::UnknownType(_)) => {}
    }
}

fn check_stream(agent: Agent, lines: &[String]) {
    let mut dialect = agent.cli().dialect();
    for line in lines {
        check_line(dialect.as_mut(), line);
    }
}

fn agent() -> impl Strategy<Value = Agent> {
    proptest::sample::select(clis::builtin_agents().collect::<Vec<_>>())
}

/// How to change one JSON node.
#[derive(Clone, Debug)]
enum Edit {
    Replace(Value),
    RemoveKey,
    AddKey(String, Value),
    Nest(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => fuzz::hostile_value().prop_map(Edit::Replace),
        2 => Just(Edit::RemoveKey),
        1 => ("[a-z_]{1,12}", fuzz::hostile_value()).prop_map(|(key, value)| Edit::AddKey(key, value)),
        1 => (1usize..200).prop_map(Edit::Nest),
    ]
}

/// Every node of `value`, depth first, as a mutable reference taken by its position.
fn node_count(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(node_count).sum(),
        Value::Object(map) => map.values().map(node_count).sum(),
        _ => 0,
    }
}

fn nth_node(value: &mut Value, mut n: usize) -> Option<&mut Value> {
    if n == 0 {
        return Some(value);
    }
    n -= 1;
    let children: Box<dyn Iterator<Item = &mut Value>> = match value {
        Value::Array(items) => Box::new(items.iter_mut()),
        Value::Object(map) => Box::new(map.values_mut()),
        _ => return None,
    };
    for child in children {
        let size = node_count(child);
        if n < size {
            return nth_node(child, n);
        }
        n -= size;
    }
    None
}

fn apply(value: &mut Value, node: Index, edit: Edit) {
    let count = node_count(value);
    let Some(target) = nth_node(value, node.index(count)) else {
        return;
    };
    match edit {
        Edit::Replace(new) => *target = new,
        Edit::RemoveKey => {
            if let Value::Object(map) = target
                && let Some(key) = map.keys().next().cloned()
            {
                map.remove(&key);
            }
        }
        Edit::AddKey(key, new) => {
            if let Value::Object(map) = target {
                map.insert(key, new);
            }
        }
        Edit::Nest(depth) => {
            for _ in 0..depth {
                *target = Value::Array(vec![target.take()]);
            }
        }
    }
}

/// A seed line with 1 to 4 JSON edits, written back as one line.
fn json_mutant(seeds: Vec<String>) -> impl Strategy<Value = String> {
    let objects: Vec<Value> = seeds
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(Value::is_object)
        .collect();
    (
        proptest::sample::select(objects),
        prop::collection::vec((any::<Index>(), edit()), 1..5),
    )
        .prop_map(|(mut value, edits)| {
            for (node, edit) in edits {
                apply(&mut value, node, edit);
            }
            serde_json::to_string(&value).expect("a Value serializes")
        })
}

/// How to change a line's text.
#[derive(Clone, Debug)]
enum TextEdit {
    Truncate(Index),
    Insert(Index, String),
    Delete(Index, usize),
    FlipByte(Index, u8),
    Splice(Index, String, Index),
}

fn text_edit(seeds: Vec<String>) -> impl Strategy<Value = TextEdit> {
    let junk = prop_oneof![
        any::<String>(),
        Just("\"".to_owned()),
        Just("\\".to_owned()),
        Just("}".to_owned()),
        Just("{\"type\":".to_owned()),
        Just("\u{0}".to_owned()),
        Just("1e999".to_owned()),
        Just("18446744073709551616".to_owned()),
        Just("\\ud800".to_owned()),
    ];
    prop_oneof![
        any::<Index>().prop_map(TextEdit::Truncate),
        (any::<Index>(), junk).prop_map(|(at, text)| TextEdit::Insert(at, text)),
        (any::<Index>(), 1usize..16).prop_map(|(at, n)| TextEdit::Delete(at, n)),
        (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| TextEdit::FlipByte(at, byte)),
        (
            any::<Index>(),
            proptest::sample::select(seeds),
            any::<Index>()
        )
            .prop_map(|(at, other, from)| TextEdit::Splice(at, other, from)),
    ]
}

/// Apply a text edit at byte level; invalid UTF-8 becomes U+FFFD, as a line reader's
/// lossy decoding would make it.
fn apply_text(line: &str, edit: &TextEdit) -> String {
    let mut bytes = line.as_bytes().to_vec();
    let at = |index: &Index, len: usize| if len == 0 { 0 } else { index.index(len + 1) };
    match edit {
        TextEdit::Truncate(index) => bytes.truncate(at(index, bytes.len())),
        TextEdit::Insert(index, text) => {
            let at = at(index, bytes.len());
            bytes.splice(at..at, text.bytes());
        }
        TextEdit::Delete(index, n) => {
            let start = at(index, bytes.len()).min(bytes.len());
            let end = (start + n).min(bytes.len());
            bytes.drain(start..end);
        }
        TextEdit::FlipByte(index, byte) => {
            if !bytes.is_empty() {
                let i = index.index(bytes.len());
                bytes[i] ^= byte;
            }
        }
        TextEdit::Splice(index, other, from) => {
            let cut = at(index, bytes.len()).min(bytes.len());
            bytes.truncate(cut);
            let other = other.as_bytes();
            bytes.extend_from_slice(&other[at(from, other.len()).min(other.len())..]);
        }
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    text.replace('\n', " ")
}

fn text_mutant(seeds: Vec<String>) -> impl Strategy<Value = String> {
    (
        proptest::sample::select(seeds.clone()),
        prop::collection::vec(text_edit(seeds), 1..4),
    )
        .prop_map(|(line, edits)| {
            edits
                .iter()
                .fold(line, |line, edit| apply_text(&line, edit))
        })
}

/// A mutated line of any kind for `agent`.
fn mutant(agent: Agent) -> impl Strategy<Value = String> {
    let seeds = seeds(agent);
    prop_oneof![
        3 => json_mutant(seeds.clone()),
        3 => text_mutant(seeds),
        1 => fuzz::hostile_value().prop_map(|value| value.to_string()),
        1 => any::<String>().prop_map(|text| text.replace('\n', " ")),
    ]
}

/// A capture of `agent` with some of its lines mutated and mutants inserted.
fn mutated_stream(agent: Agent) -> impl Strategy<Value = Vec<String>> {
    let dir = fuzz::fixtures().join("captures").join(agent.name());
    let mut streams: Vec<Vec<String>> = std::fs::read_dir(&dir)
        .expect("captures")
        .map(|entry| {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("capture");
            text.lines().map(str::to_owned).collect()
        })
        .collect();
    streams.sort();
    (
        proptest::sample::select(streams),
        prop::collection::vec((any::<Index>(), any::<bool>(), mutant(agent)), 1..6),
    )
        .prop_map(|(mut lines, changes)| {
            for (at, replace, line) in changes {
                let i = at.index(lines.len() + 1);
                if replace && i < lines.len() {
                    lines[i] = line;
                } else {
                    lines.insert(i.min(lines.len()), line);
                }
            }
            lines
        })
}

/// An agent and one of its mutated streams (each agent's seeds are read once).
fn any_stream() -> impl Strategy<Value = (Agent, Vec<String>)> {
    let per_agent = clis::builtin_agents().map(|agent| {
        mutated_stream(agent)
            .prop_map(move |lines| (agent, lines))
            .boxed()
    });
    proptest::strategy::Union::new(per_agent)
}

proptest! {
    #![proptest_config(fuzz::config("dialects", 400))]

    #[test]
    fn a_mutated_stream_never_panics_and_every_bad_line_is_an_issue(
        (agent, lines) in any_stream()
    ) {
        check_stream(agent, &lines);
    }

    #[test]
    fn any_line_at_all_is_parsed_or_an_issue(agent in agent(), line in any::<String>()) {
        check_line(agent.cli().dialect().as_mut(), &line);
    }
}

#[test]
fn every_nasty_line_is_parsed_or_an_issue_by_every_parser() {
    let nasty = nasty();
    assert!(nasty.len() > 100, "the nasty corpus is missing");
    for agent in clis::builtin_agents() {
        check_stream(agent, &nasty);
    }
}
