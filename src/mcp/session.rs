//! Which MCP session a request or notification came in: one HTTP server carries many (told
//! apart by their `Mcp-Session-Id` header); stdio, and an HTTP request without a session, one.

use axum::http::request::Parts;
use rmcp::model::Extensions;

/// The key of the session `extensions` belong to.
pub fn session_key(extensions: &Extensions) -> String {
    extensions
        .get::<Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|id| id.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}
