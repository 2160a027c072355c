//! MCP logging over stdio: the server declares `logging`, `logging/setLevel` picks the level,
//! and the server's warnings reach the client as `notifications/message`, secrets masked as in
//! the log lines; below the level nothing arrives. (HTTP sessions and 2026-07-28 requests:
//! tests/conformance/conformance.rs and tests/conformance/mcp_interop.rs.)

use crate::mcp;

use mcp::Server;
use serde_json::{Value, json};

const KEY: &str = "sk-ant-api03-Xq7dK2mN9pL4vR8sT1wY6zB3cF5gH0jA";

/// A notification the server cannot read: it logs a warning saying so, naming its method.
fn malformed_notification() -> Vec<u8> {
    let line = json!({"jsonrpc": "2.0", "method": format!("notifications/{KEY}"),
                      "params": "not an object"});
    format!("{line}\n").into_bytes()
}

fn log_messages(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|message| message["method"] == "notifications/message")
        .cloned()
        .collect()
}

async fn set_level(server: &mut Server, level: &str) {
    let id = server
        .request("logging/setLevel", json!({"level": level}))
        .await;
    assert_eq!(server.result(id).await, json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warning_reaches_the_client_at_its_level_masked_and_not_below_it() {
    let mut server = Server::start().await;
    let init = server.initialize().await;
    assert!(
        init["capabilities"]["logging"].is_object(),
        "the logging capability is declared: {init:#}"
    );

    set_level(&mut server, "error").await;
    server.send_raw(&malformed_notification()).await;
    server.ping().await;

    set_level(&mut server, "warning").await;
    server.send_raw(&malformed_notification()).await;
    let logged = server
        .wait_for("a warning as notifications/message", |messages| {
            log_messages(messages).into_iter().next()
        })
        .await;
    assert_eq!(logged["params"]["level"], "warning", "{logged:#}");
    assert!(
        logged["params"]["logger"]
            .as_str()
            .is_some_and(|logger| logger.starts_with("cli_agent_mcp")),
        "{logged:#}"
    );
    let data = logged["params"]["data"].to_string();
    assert!(data.contains("malformed"), "{data}");
    assert!(!data.contains("Xq7dK2mN9"), "masked: {data}");
    assert!(data.contains("[redacted]"), "{data}");
    server.ping().await;
    assert_eq!(
        log_messages(&server.messages()).len(),
        1,
        "the warning sent below the level never arrived (one queue, in order): {:#?}",
        log_messages(&server.messages())
    );
    assert!(
        server.stderr().contains("ignored a malformed message"),
        "stderr keeps everything"
    );
}

/// A 2026-07-28 request (no session) hears warnings only while it runs and only if its
/// `_meta` names a `logLevel`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_request_hears_warnings_only_with_a_log_level_in_its_meta() {
    let mut server = Server::builder().spawn();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": mcp::MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut asking = meta.clone();
    asking["io.modelcontextprotocol/logLevel"] = json!("warning");
    for (token, mut meta, hears) in [("quiet", meta, false), ("asking", asking, true)] {
        meta["progressToken"] = json!(token);
        let params = json!({"name": "gemini", "arguments": {"prompt": "stream=3"}, "_meta": meta});
        let call = server.request("tools/call", params).await;
        server
            .wait_for("the call is running", |_| {
                (!server.progress(token).is_empty()).then_some(())
            })
            .await;
        server.send_raw(&malformed_notification()).await;
        if hears {
            server
                .wait_for("the warning during the call", |messages| {
                    log_messages(messages).into_iter().next()
                })
                .await;
        }
        server.result(call).await;
    }
    assert_eq!(
        log_messages(&server.messages()).len(),
        1,
        "only the request that named a level heard it"
    );
}
