//! rmcp's Streamable HTTP service at [`MCP_PATH`], as `serve --http` and a run's question
//! endpoint serve it. rmcp's own Host check is off: the front's guard does it, with refusals
//! that say what to change.

use std::sync::Arc;

use axum::Router;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

/// Where MCP is served; `/` stays free for another router (the dashboard).
pub const MCP_PATH: &str = "/mcp";

/// `handler` at [`MCP_PATH`]: every session (2025-11-25) and every request (2026-07-28) gets a
/// clone of it. Put the front's guard around the router: rmcp's Host check is off.
pub fn mcp_router<H: ServerHandler + Clone>(
    handler: H,
    config: StreamableHttpServerConfig,
) -> Router {
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config.disable_allowed_hosts(),
    );
    Router::new().nest_service(MCP_PATH, service)
}
