//! What one line of the MCP channel is: a message for the session, a mistake the client is
//! told about, or something to skip.
//!
//! rmcp's own stdio reader drops a line that is not JSON or is over its size limit without a
//! word, so a client waits forever for the answer; it answers a request whose parameters do
//! not fit with "method not found". Here every request gets an answer that says what was
//! wrong, and notifications (which never get answers) are only logged.

use cli_agent_engine::process::Line;
use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, DiscoverRequest, ErrorData,
    InitializeRequest, ListToolsRequest, PingRequest, RequestId, ServerJsonRpcMessage,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The longest line read as a message: rmcp's own default, so nothing it accepted is refused.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// UTF-8 byte order mark, which RFC 8259 lets a reader skip.
const BOM: &[u8] = b"\xEF\xBB\xBF";

#[derive(Debug)]
pub enum Inbound {
    /// A message for the session.
    Message(Box<ClientJsonRpcMessage>),
    /// A mistake: answer the client with this error.
    Refused(Box<ServerJsonRpcMessage>),
    /// Not answerable (a notification or a response the session cannot use): log why.
    Ignored(String),
    /// An empty line.
    Blank,
}

/// Read one line of the MCP channel.
pub fn classify(line: Line<'_>) -> Inbound {
    let bytes = match line {
        Line::Complete(bytes) => bytes,
        Line::TooLong { bytes } => {
            let message = format!(
                "a message of {bytes} bytes is over the limit of {MAX_MESSAGE_BYTES} bytes per \
                 line: send a shorter prompt or fewer arguments"
            );
            return refuse(ErrorData::parse_error(message, None), None);
        }
    };
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes).trim_ascii();
    if bytes.is_empty() {
        return Inbound::Blank;
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(ClientJsonRpcMessage::Request(request)) => {
            let reason = match &request.request {
                ClientRequest::CustomRequest(custom) => {
                    misfit_params(custom.method.as_str(), custom.params.as_ref())
                }
                _ => None,
            };
            match reason {
                Some(reason) => refuse(ErrorData::invalid_params(reason, None), Some(request.id)),
                None => Inbound::Message(Box::new(ClientJsonRpcMessage::Request(request))),
            }
        }
        Ok(message) => Inbound::Message(Box::new(message)),
        Err(error) if error.is_syntax() || error.is_eof() => {
            let message = format!(
                "cannot read the line as JSON ({error}): send one JSON-RPC message per line, \
                 as UTF-8, nested at most 127 levels deep, with numbers that fit 64 bits"
            );
            refuse(ErrorData::parse_error(message, None), None)
        }
        Err(error) => not_a_message(bytes, &error),
    }
}

/// Well-formed JSON that is not a message the session reads.
fn not_a_message(bytes: &[u8], error: &serde_json::Error) -> Inbound {
    let value: Value = serde_json::from_slice(bytes).unwrap_or_default();
    let method = value.get("method").and_then(Value::as_str);
    let id = value.get("id");
    if method.is_none() && (value.get("result").is_some() || value.get("error").is_some()) {
        return Inbound::Ignored(format!("a malformed response: {error}"));
    }
    match (method, id) {
        (Some(method), None) => {
            Inbound::Ignored(format!("notification `{}`: {error}", head(method)))
        }
        (Some(method), Some(id)) => match misfit_params(method, value.get("params")) {
            Some(reason) => refuse(ErrorData::invalid_params(reason, None), request_id(id)),
            None => invalid_request(error, request_id(id)),
        },
        (None, id) => invalid_request(error, id.and_then(request_id)),
    }
}

fn invalid_request(error: &serde_json::Error, id: Option<RequestId>) -> Inbound {
    let message = format!(
        "not a JSON-RPC 2.0 request ({error}): send an object with \"jsonrpc\": \"2.0\", an \
         integer or string \"id\", a \"method\" and its \"params\""
    );
    refuse(ErrorData::invalid_request(message, None), id)
}

/// Why `params` do not fit `method`, for the methods this server serves. rmcp reads a standard
/// request whose params do not fit as a custom one, which a handler can only call an unknown
/// method, and a request whose params are not an object not at all.
fn misfit_params(method: &str, params: Option<&Value>) -> Option<String> {
    let mut value = serde_json::json!({ "method": method });
    if let Some(params) = params {
        value["params"] = params.clone();
    }
    let error = match method {
        "initialize" => misfit::<InitializeRequest>(value),
        "ping" => misfit::<PingRequest>(value),
        "server/discover" => misfit::<DiscoverRequest>(value),
        "tools/list" => misfit::<ListToolsRequest>(value),
        "tools/call" => misfit::<CallToolRequest>(value),
        _ => None,
    }?;
    Some(format!("invalid params for `{method}`: {error}"))
}

fn misfit<T: DeserializeOwned>(value: Value) -> Option<serde_json::Error> {
    serde_json::from_value::<T>(value).err()
}

/// The start of a name a client chose, for a log line: it may be megabytes long.
fn head(text: &str) -> &str {
    let end = text.char_indices().nth(80).map_or(text.len(), |(at, _)| at);
    &text[..end]
}

/// A JSON-RPC id this server can echo: an integer that fits 64 bits, or a string.
fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::Number(number) => number.as_i64().map(RequestId::Number),
        Value::String(text) => Some(RequestId::String(text.as_str().into())),
        _ => None,
    }
}

fn refuse(error: ErrorData, id: Option<RequestId>) -> Inbound {
    Inbound::Refused(Box::new(ServerJsonRpcMessage::error(error, id)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn classify_text(text: &str) -> Inbound {
        classify(Line::Complete(text.as_bytes()))
    }

    /// The error code, id and message of a refusal; panics on anything else.
    fn refusal(inbound: Inbound) -> (i32, Value, String) {
        let Inbound::Refused(reply) = inbound else {
            panic!("expected a refusal, got {inbound:?}");
        };
        let reply = serde_json::to_value(&reply).expect("json");
        let code = reply["error"]["code"].as_i64().expect("code") as i32;
        let message = reply["error"]["message"]
            .as_str()
            .expect("message")
            .to_owned();
        (code, reply["id"].clone(), message)
    }

    #[test]
    fn a_line_over_the_limit_is_a_parse_error_naming_its_size() {
        let (code, id, message) = refusal(classify(Line::TooLong { bytes: 100_000_000 }));
        assert_eq!(code, -32700);
        assert_eq!(id, Value::Null);
        assert!(message.contains("100000000 bytes"), "{message}");
    }

    #[test]
    fn text_that_is_not_json_is_a_parse_error() {
        for line in ["hello", "{\"jsonrpc\":", "[[[[", "{\"a\":\"\\ud800\"}x"] {
            let (code, _, message) = refusal(classify_text(line));
            assert_eq!(code, -32700, "{line}");
            assert!(
                message.contains("cannot read the line as JSON"),
                "{message}"
            );
        }
        let (code, _, _) = refusal(classify(Line::Complete(b"{\"a\":\"\xff\"}")));
        assert_eq!(code, -32700, "invalid UTF-8");
    }

    #[test]
    fn nesting_deeper_than_serde_allows_is_a_parse_error_not_a_stack_overflow() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{}{}}}",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let (code, _, message) = refusal(classify_text(&deep));
        assert_eq!(code, -32700);
        assert!(message.contains("recursion limit"), "{message}");
    }

    #[test]
    fn a_request_of_the_wrong_shape_is_refused_with_its_id_when_it_has_one() {
        let (code, id, message) =
            refusal(classify_text(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#));
        assert_eq!((code, id), (-32600, json!(7)));
        assert!(message.contains("JSON-RPC 2.0"), "{message}");
        let (code, id, _) = refusal(classify_text(r#"{"id":{"a":1},"method":"ping"}"#));
        assert_eq!((code, id), (-32600, Value::Null));
        let (code, id, _) = refusal(classify_text("[1,2]"));
        assert_eq!((code, id), (-32600, Value::Null));
    }

    #[test]
    fn a_served_method_with_params_that_do_not_fit_is_invalid_params_not_method_not_found() {
        let line = r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":5}}"#;
        let (code, id, message) = refusal(classify_text(line));
        assert_eq!((code, id), (-32602, json!("x")));
        assert!(
            message.contains("tools/call") && message.contains("invalid type"),
            "{message}"
        );
    }

    #[test]
    fn notifications_and_responses_are_never_answered() {
        for line in [
            r#"{"jsonrpc":"1.0","method":"notifications/cancelled"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"result":{}}"#,
            r#"{"jsonrpc":"2.0","error":{"code":"x"}}"#,
        ] {
            assert!(matches!(classify_text(line), Inbound::Ignored(_)), "{line}");
        }
    }

    #[test]
    fn messages_pass_and_blank_lines_are_skipped() {
        let ping = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r";
        assert!(matches!(classify_text(ping), Inbound::Message(_)));
        let cancel =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#;
        assert!(matches!(classify_text(cancel), Inbound::Message(_)));
        assert!(matches!(classify_text("  \r"), Inbound::Blank));
    }
}
