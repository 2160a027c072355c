//! Nothing is lost under load: hundreds of concurrent calls on one server, through the built
//! binary, with the light stand-in in tests/fixtures/quick-cli. Every call comes back with the
//! exact answer its CLI wrote, and no process of any run is left.
//!
//! Each stand-in leaves two children holding its stdout, as CLIs leave tool processes, so
//! every run ends in a teardown that kills and sweeps; hundreds of those at once, on two
//! cores, keep the server's runtime busy for seconds, the condition in which output used to
//! be dropped when a drain deadline passed before the reader got to run.

use crate::common;
use crate::mcp;

use std::collections::HashMap;
use std::path::PathBuf;

use mcp::{Server, is_error};
use serde_json::{Value, json};

/// Calls in flight at once on one server.
const CONCURRENT: usize = 400;
/// How long each stand-in waits between its start events and its answer, in seconds: long
/// enough that every call is running before the first one ends.
const CLI_SLEEP_SECS: u32 = 4;
/// Children each stand-in leaves behind.
const CLI_CHILDREN: u32 = 2;

fn quick_cli() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quick-cli/codex")
}

/// The answer of one call's result, or what went wrong with it.
fn answer(result: &Value) -> Result<&str, String> {
    let outcome = &result["structuredContent"];
    if is_error(result) || outcome["status"] != "completed" {
        return Err(format!(
            "status {}: {} (stderr tail {:?}, session {})",
            outcome["status"],
            outcome["error"]["message"],
            outcome["stderr_tail"],
            outcome["session_id"]
        ));
    }
    outcome["answer"]
        .as_str()
        .ok_or_else(|| format!("no answer in {result}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_hundred_concurrent_calls_each_get_their_exact_answer_and_leave_nothing() {
    // Every call runs at once: the point is the engine under load, not the queue.
    let mut server = Server::builder()
        .env("CAM_CODEX_BIN", quick_cli())
        .env("CAM_MAX_RUNS", CONCURRENT.to_string())
        .spawn();
    server.initialize().await;
    let mut expected = HashMap::with_capacity(CONCURRENT);
    for n in 0..CONCURRENT {
        let word = format!("answer-{n}");
        let prompt = format!("children={CLI_CHILDREN} sleep={CLI_SLEEP_SECS} answer={word}");
        let id = server
            .start_call("codex", json!({"prompt": prompt}), None)
            .await;
        expected.insert(id, word);
    }
    let responses = server
        .wait_for("every call's response", |messages| {
            let responses: HashMap<i64, Value> = messages
                .iter()
                .filter(|m| {
                    m["id"]
                        .as_i64()
                        .is_some_and(|id| expected.contains_key(&id))
                })
                .filter_map(|m| Some((m["id"].as_i64()?, m.get("result")?.clone())))
                .collect();
            (responses.len() == CONCURRENT).then_some(responses)
        })
        .await;

    let mut lost: Vec<String> = expected
        .iter()
        .filter_map(|(id, word)| match answer(&responses[id]) {
            Ok(got) if got == word => None,
            Ok(got) => Some(format!("call {id}: answer {got:?}, expected {word:?}")),
            Err(error) => Some(format!("call {id}: {error}")),
        })
        .collect();
    lost.sort();
    assert!(
        lost.is_empty(),
        "{} of {CONCURRENT} calls lost their answer:\n{}\n{}",
        lost.len(),
        lost.join("\n"),
        server.stderr()
    );
    let survivors = common::run_processes_of(server.pid());
    assert!(
        survivors.is_empty(),
        "processes of runs survived: {survivors:?}"
    );
    let stderr = server.stderr();
    assert!(
        !stderr.contains("stopped reading it"),
        "a drain gave up though no process escaped:\n{stderr}"
    );
}
