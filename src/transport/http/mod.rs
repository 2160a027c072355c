//! `serve --http ADDR`: MCP over Streamable HTTP at `/mcp`, for hosts that connect by URL
//! and for several clients sharing one server.
//!
//! rmcp's `StreamableHttpService` does the protocol: 2025-11-25 clients get a session
//! (`Mcp-Session-Id`), 2026-07-28 requests are served statelessly. Every session and request
//! shares the one [`AgentServer`] (engine, jobs, limits). Around it, outermost first, the web
//! front's parts ([`crate::web`]), built in `settings` with refusals that name the settings:
//! the guard (Host and Origin: DNS-rebinding protection), the bearer token (`auth`: when one is
//! set), the limits (body size, requests in flight, open streams). Other routes
//! (`commands::serve` mounts the dashboard's) are served at `/` beside it, behind the guard
//! only: they bring their own login (a browser cannot send the bearer token). In a build with the
//! `conformance-fixtures` feature (the conformance tests'), `conformance` can stand around the
//! handler with the fixtures the MCP conformance suite calls; a release has none.
//!
//! Cancelling: on 2026-07-28 closing a request's stream is the cancel, so its run stops (unless
//! handed off as a job). On 2025-11-25 a dropped stream is not a cancel (the spec lets the
//! client resume it); `notifications/cancelled` or ending the session (DELETE) stops the runs.
//!
//! Shutdown (SIGTERM, SIGHUP, SIGINT when idle) is the stdio one: no new connection, every run
//! stopped (jobs recorded `interrupted`), the stopped calls' answers sent, then the streams
//! closed and exit 0, all within the engine's grace plus 1.8 s.

mod auth;
#[cfg(feature = "conformance-fixtures")]
mod conformance;
mod settings;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use tokio::time::timeout_at;
use tokio_util::sync::CancellationToken;

pub use self::settings::{Options, Settings};
use crate::mcp::{AgentServer, EXIT_OK, EXIT_SESSION_FAILED, EXIT_USAGE, Lifecycle};
use crate::web::{MCP_PATH, Slots, SlotsLayer, mcp_router};

/// What the routes served beside `/mcp` get to build themselves with.
pub struct Mount<'a> {
    /// The address actually bound (a port 0 resolved).
    pub bound: SocketAddr,
    /// Cancelled when the server closes its streams at shutdown.
    pub streams: &'a CancellationToken,
}

/// Serve until a shutdown, then stop the runs, send their answers and exit; the result is the
/// exit code. `beside` gives the routes to serve at `/`, if any, once the address is bound.
pub async fn serve(
    server: AgentServer,
    settings: Settings,
    lifecycle: Lifecycle,
    beside: impl FnOnce(Mount<'_>) -> Option<Router>,
) -> u8 {
    let listener = match tokio::net::TcpListener::bind(settings.addr).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!(
                "error: cannot listen on {}: {error}; choose another --http address or port",
                settings.addr
            );
            return EXIT_USAGE;
        }
    };
    let bound = listener.local_addr().unwrap_or(settings.addr);
    let streams = CancellationToken::new();
    let beside = beside(Mount {
        bound,
        streams: &streams,
    });
    let app = router(server, &settings, streams.clone(), beside);
    let url = format!("http://{bound}{MCP_PATH}");
    let token = settings.bearer.is_some();
    tracing::info!(%url, token, "listening");
    let shutdown = lifecycle.shutdown.clone();
    let mut serving = tokio::spawn(
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { shutdown.triggered().await })
            .into_future(),
    );
    let failed = tokio::select! {
        biased;
        () = lifecycle.shutdown.triggered() => false,
        ended = &mut serving => {
            tracing::error!(?ended, "the HTTP server stopped");
            true
        }
    };
    let deadline = lifecycle.deadline();
    lifecycle.stop_runs(deadline).await;
    if failed {
        return EXIT_SESSION_FAILED;
    }
    close(serving, &settings.requests, &streams, deadline).await;
    EXIT_OK
}

/// The stopped calls' answers go out on their streams; then every stream is closed, by
/// `deadline`.
async fn close(
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
    requests: &Slots,
    streams: &CancellationToken,
    deadline: tokio::time::Instant,
) {
    if timeout_at(deadline, requests.all_free()).await.is_err() {
        tracing::debug!("answers were still being sent at the deadline");
    }
    streams.cancel();
    if timeout_at(deadline, serving).await.is_err() {
        tracing::debug!("HTTP connections were still closing at exit");
    }
}

/// `/mcp` behind the guard, the token and the limits; the routes `beside` it behind the guard
/// only (they bring their own login).
fn router(
    server: AgentServer,
    settings: &Settings,
    streams: CancellationToken,
    beside: Option<Router>,
) -> Router {
    let mut mcp = mcp_routes(Arc::new(server), settings, streams)
        .layer(SlotsLayer::new(settings.streams.clone()))
        .layer(SlotsLayer::new(settings.requests.clone()))
        .layer(settings.body.clone());
    if let Some(bearer) = &settings.bearer {
        mcp = mcp.layer(bearer.clone());
    }
    if let Some(routes) = beside {
        mcp = mcp.merge(routes);
    }
    mcp.layer(settings.guard.clone())
}

/// rmcp's Streamable HTTP service at `/mcp`: the agents' handler, or the conformance fixtures
/// around it when a build with them was asked for them.
fn mcp_routes(agents: Arc<AgentServer>, settings: &Settings, streams: CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(streams)
        .with_max_request_body_bytes(settings.body.check().max());
    #[cfg(feature = "conformance-fixtures")]
    if let Some(fixtures) = &settings.fixtures {
        let handler = conformance::Fixtured::new(agents, fixtures.clone());
        return mcp_router(handler, config);
    }
    mcp_router(agents, config)
}
