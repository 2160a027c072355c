//! The built server fed garbage through its real stdio: after each piece it keeps serving the
//! next valid request, answers every request it cannot read with an error that says why, and
//! holds no more memory than a line's cap for a line of any length.
//!
//! The hand-picked lines of `tests/fixtures/fuzz/mcp.jsonl` are replayed one by one; the named
//! cases below check the answer to each kind.

use crate::common;
use crate::mcp;

use common::{assert_none_tagged, unique, wait_for_tagged};
use mcp::{Server, all_text, is_error};
use serde_json::{Value, json};

/// A ping under an id no garbage line uses; waits for its answer.
async fn assert_still_serving(server: &mut Server, after: &str) {
    let id = unique("ping");
    server
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
        .await;
    server
        .wait_for(&format!("the ping after {after}"), |messages| {
            messages
                .iter()
                .find(|m| m["id"] == id.as_str() && m.get("result").is_some())
                .cloned()
        })
        .await;
    assert!(server.is_running(), "the server exited after {after}");
}

/// The next error answer without an id after `seen` messages.
async fn next_idless_error(server: &Server, seen: usize, what: &str) -> Value {
    server
        .wait_for(what, |messages| {
            messages[seen..]
                .iter()
                .find(|m| m.get("error").is_some() && m["id"].is_null())
                .cloned()
        })
        .await
}

/// Send `bytes` and expect a parse error (-32700) without an id that says `says`.
async fn assert_parse_error(server: &mut Server, bytes: &[u8], says: &str) {
    let seen = server.messages().len();
    server.send_raw(bytes).await;
    let answer = next_idless_error(server, seen, "a parse error").await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{answer}");
}

/// The answer to a request whose id is `id` (any JSON value).
async fn answer_to(server: &Server, id: &Value) -> Value {
    server
        .wait_for(&format!("the answer to {id}"), |messages| {
            messages
                .iter()
                .find(|m| &m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
                .cloned()
        })
        .await
}

fn assert_only_json_rpc(server: &Server) {
    for message in server.messages() {
        assert_eq!(
            message["jsonrpc"], "2.0",
            "not JSON-RPC on stdout: {message}"
        );
    }
}

/// The server's resident memory now, in KiB.
fn resident_kib(server: &Server) -> u64 {
    let pid = u32::try_from(server.pid()).expect("a pid");
    cli_agent_engine::platform::resident_bytes(pid).expect("the server's resident memory") / 1024
}

/// The server's peak resident memory so far, in KiB (`VmHWM`).
#[cfg(target_os = "linux")]
fn peak_kib(server: &Server) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).expect("status");
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok());
    Some(kib.expect("VmHWM in /proc status"))
}

/// macOS keeps no peak resident size of another process: only the figure now is checked there.
#[cfg(not(target_os = "linux"))]
fn peak_kib(_: &Server) -> Option<u64> {
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_line_of_the_garbage_corpus_leaves_the_server_serving() {
    let corpus = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/mcp.jsonl"),
    )
    .expect("corpus");
    let mut server = Server::start().await;
    for (n, line) in corpus.split(|&b| b == b'\n').enumerate() {
        let mut bytes = line.to_vec();
        bytes.push(b'\n');
        server.send_raw(&bytes).await;
        assert_still_serving(&mut server, &format!("corpus line {}", n + 1)).await;
    }
    assert_only_json_rpc(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_bytes_and_invalid_utf8_get_a_parse_error() {
    let mut server = Server::start().await;
    let garbage: Vec<u8> = (0u32..4096)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .filter(|&b| b != b'\n')
        .chain(*b"\xff\xfe\xc3(\n")
        .collect();
    for bytes in [
        &garbage[..],
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"s\":\"\xff\"}}\n",
    ] {
        assert_parse_error(&mut server, bytes, "cannot read the line as JSON").await;
        assert_still_serving(&mut server, "random bytes").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_line_is_refused_without_being_held_and_the_next_request_is_served() {
    let mut server = Server::start().await;
    let (resident_before, peak_before) = (resident_kib(&server), peak_kib(&server));
    let seen = server.messages().len();
    let chunk = vec![b'x'; 1024 * 1024];
    server
        .send_raw(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"codex","arguments":{"prompt":""#)
        .await;
    for _ in 0..100 {
        server.send_raw(&chunk).await;
    }
    server.send_raw(b"\"}}}\n").await;
    let answer = next_idless_error(&server, seen, "the refusal of the 100 MB line").await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("over the limit of 16777216 bytes"),
        "{message}"
    );
    assert_still_serving(&mut server, "a 100 MB line").await;
    let now = resident_kib(&server);
    // The line is dropped as it streams past: what it costs is bounded by the 16 MiB cap.
    if let (Some(before), Some(peak)) = (peak_before, peak_kib(&server)) {
        assert!(
            peak - before < 48 * 1024,
            "the peak grew by {} KiB",
            peak - before
        );
    }
    let baseline = peak_before.unwrap_or(resident_before);
    assert!(
        now < baseline + 24 * 1024,
        "{now} KiB resident after the line"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_nested_10000_deep_gets_a_parse_error_not_a_stack_overflow() {
    let mut server = Server::start().await;
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"a\":{}{}}}}}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert_parse_error(&mut server, deep.as_bytes(), "recursion limit").await;
    assert_still_serving(&mut server, "deep nesting").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_ids_are_echoed_or_refused_and_the_session_goes_on() {
    let mut server = Server::start().await;
    let long_id = "i".repeat(1024 * 1024);
    server
        .send(&json!({"jsonrpc": "2.0", "id": long_id, "method": "ping"}))
        .await;
    let answer = answer_to(&server, &json!(long_id)).await;
    assert!(
        answer.get("result").is_some(),
        "a long string id is a valid id"
    );

    for id in [
        "18446744073709551616",
        "-9223372036854775809",
        "1.5",
        "1e400",
    ] {
        let seen = server.messages().len();
        let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
        server.send_raw(line.as_bytes()).await;
        let answer = next_idless_error(&server, seen, &format!("the refusal of id {id}")).await;
        // Out of range is a parse error (-32700), a fraction a wrong type (-32600).
        let code = answer["error"]["code"].as_i64();
        assert!(matches!(code, Some(-32700 | -32600)), "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("64 bits") || message.contains("\"id\""),
            "{answer}"
        );
        assert_still_serving(&mut server, &format!("id {id}")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_type_in_any_field_of_a_call_is_answered_with_an_error_that_says_why() {
    let mut server = Server::start().await;
    let params = [
        json!(null),
        json!([]),
        json!("codex"),
        json!({"name": 5}),
        json!({"name": null, "arguments": {"prompt": "x"}}),
        json!({"name": "codex", "arguments": "x"}),
        json!({"name": "codex", "arguments": [1]}),
        json!({"name": "codex", "arguments": {"prompt": 5}}),
        json!({"name": "codex", "arguments": {"prompt": "x", "workspace": 5}}),
        json!({"name": "codex", "arguments": {"prompt": "x", "permission": 7}}),
        json!({"name": "codex", "arguments": {"prompt": "x", "model": {}}}),
        json!({"name": "codex", "arguments": {"prompt": "x", "session_id": []}}),
        json!({"name": "codex", "arguments": {"prompt": "x", "timeout_secs": "5"}}),
        json!({"name": "codex", "arguments": {"prompt": "x", "timeout_secs": -1}}),
        json!({"name": "codex", "arguments": {"prompt": "x", "append_system_prompt": 1}}),
        json!({"name": "codex", "arguments": {"prompt": "x"}, "_meta": 5}),
    ];
    for (n, params) in params.into_iter().enumerate() {
        let id = json!(format!("call-{n}"));
        server
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        let answer = answer_to(&server, &id).await;
        let message = match answer.get("error") {
            Some(error) => error["message"].as_str().unwrap_or_default().to_owned(),
            None => {
                assert!(is_error(&answer["result"]), "{params} was taken: {answer}");
                all_text(&answer["result"])
            }
        };
        assert!(
            message.contains("invalid") || message.contains("not an argument"),
            "{params}: {message}"
        );
    }
    assert_still_serving(&mut server, "wrong types").await;
    assert_only_json_rpc(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_before_initialize_do_not_end_the_session() {
    let mut server = Server::builder().spawn();
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":77,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":78,"error":{"code":1,"message":"x"}}"#,
        "not json at all",
    ] {
        server.send_raw(format!("{line}\n").as_bytes()).await;
    }
    let id = server.request("tools/list", json!({})).await;
    let refused = server.response(id).await;
    assert_eq!(
        refused["error"]["code"], -32602,
        "a 2025 call before initialize: {refused}"
    );
    let init = server.initialize().await;
    assert_eq!(init["serverInfo"]["name"], "cli-agent-mcp");
    assert_eq!(
        server.tool_names().await.len(),
        mcp::agents().len() + mcp::JOB_TOOLS.len()
    );
    assert!(
        server
            .stderr()
            .contains("ignored a message that came before `initialize`")
    );
    assert_only_json_rpc(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancels_for_unknown_ids_touch_no_call_and_the_real_cancel_still_works() {
    let mut server = Server::start().await;
    let tag = unique("garbage-cancel");
    let id = server
        .start_call(
            "codex",
            json!({"prompt": format!("hang children=1 tag={tag}")}),
            None,
        )
        .await;
    wait_for_tagged(&tag, 1).await;
    for request_id in [
        json!(id + 1000),
        json!("nope"),
        json!(null),
        json!({}),
        json!(1e300),
    ] {
        server
            .notify(
                "notifications/cancelled",
                Some(json!({"requestId": request_id})),
            )
            .await;
    }
    server
        .notify("notifications/cancelled", Some(json!("not params")))
        .await;
    assert_still_serving(&mut server, "cancels for unknown ids").await;
    assert!(
        !server.has_response(id),
        "the call ended on a cancel for another id"
    );
    wait_for_tagged(&tag, 1).await;
    server.cancel(id, "the test is done").await;
    common::wait_until("the cancelled call's processes are gone", || {
        common::tagged_pids(&tag).is_empty()
    })
    .await;
    assert_none_tagged(&tag);
    assert_still_serving(&mut server, "the real cancel").await;
}

/// rmcp keys a call by its id: a second request under the id of one in flight would take over
/// its cancellation, leaving one of the two uncancellable or unanswered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_reusing_the_id_of_a_call_in_flight_is_refused_and_the_call_goes_on() {
    let mut server = Server::start().await;
    let tag = unique("garbage-dup");
    let id = json!("dup");
    let call = |prompt: String| {
        json!({"jsonrpc": "2.0", "id": "dup", "method": "tools/call",
               "params": {"name": "codex", "arguments": {"prompt": prompt}}})
    };
    server
        .send(&call(format!("hang children=1 tag={tag}")))
        .await;
    wait_for_tagged(&tag, 1).await;
    let seen = server.messages().len();
    server.send(&call("hi".to_owned())).await;
    let refused = answer_to(&server, &id).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("is taken by an earlier request"),
        "{message}"
    );
    assert_still_serving(&mut server, "a reused id").await;
    wait_for_tagged(&tag, 1).await;

    // The first call is still the client's to cancel, and its id stays taken.
    server
        .notify("notifications/cancelled", Some(json!({"requestId": "dup"})))
        .await;
    common::wait_until("the first call's processes are gone", || {
        common::tagged_pids(&tag).is_empty()
    })
    .await;
    server.send(&call("hi".to_owned())).await;
    let refusals = |messages: &[Value]| {
        let answers = messages[seen..].iter().filter(|m| m["id"] == id);
        let refusals: Vec<_> = answers.filter(|m| m["error"]["code"] == -32600).collect();
        (refusals.len() == 2).then_some(())
    };
    server
        .wait_for("the refusal of the cancelled id", refusals)
        .await;
    assert_still_serving(&mut server, "the cancel").await;
    let answers: Vec<_> = server.messages()[seen..]
        .iter()
        .filter(|m| m["id"] == id)
        .cloned()
        .collect();
    assert_eq!(answers.len(), 2, "only the two refusals: {answers:?}");
}
