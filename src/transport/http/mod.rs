//! `serve --http ADDR`: MCP over Streamable HTTP at `/mcp`, for hosts that connect by URL
//! and for several clients sharing one server.
//!
//! rmcp's `StreamableHttpService` does the protocol: 2025-11-25 clients get a session
//! (`Mcp-Session-Id`), 2026-07-28 requests are served statelessly. Every session and request
//! shares the one [`AgentServer`] (engine, jobs, limits). Around it, outermost first: `guard`
//! (Host and Origin: DNS-rebinding protection), `auth` (the bearer token, when one is set),
//! `limits` (body size, requests in flight, open streams). Other routes (`commands::serve`
//! mounts the dashboard's) are served at `/` beside it, behind `guard` only: they bring their
//! own login (a browser cannot send the bearer token). In a build with the
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
mod guard;
mod limits;
mod refusal;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::time::timeout_at;
use tokio_util::sync::CancellationToken;

use self::auth::{Token, TokenError};
use self::guard::{Allowed, BadOrigin};
use self::limits::Limits;
use crate::mcp::{AgentServer, EXIT_OK, EXIT_SESSION_FAILED, EXIT_USAGE, Lifecycle};

/// Where MCP is served; `/` stays free for another router (the dashboard).
pub const MCP_PATH: &str = "/mcp";

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(
        "--http {0} is not a loopback address, and no token is set: anyone who can reach it \
         could run agents as you. Set CAM_HTTP_TOKEN or --http-token-file, or bind 127.0.0.1"
    )]
    PublicWithoutToken(SocketAddr),
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error(transparent)]
    Origin(#[from] BadOrigin),
    #[cfg(feature = "conformance-fixtures")]
    #[error(transparent)]
    Fixtures(#[from] conformance::NoKey),
}

/// What `--http` and its options ask for, unchecked.
#[derive(Debug)]
pub struct Options {
    pub token_file: Option<std::path::PathBuf>,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: usize,
    pub max_requests: u32,
    pub max_streams: u32,
    /// Also offer the fixtures the MCP conformance suite calls.
    #[cfg(feature = "conformance-fixtures")]
    pub fixtures: bool,
}

/// What the routes served beside `/mcp` get to build themselves with.
pub struct Mount<'a> {
    /// The address actually bound (a port 0 resolved).
    pub bound: SocketAddr,
    /// Cancelled when the server closes its streams at shutdown.
    pub streams: &'a CancellationToken,
}

/// The checked settings of `--http`.
#[derive(Debug)]
pub struct Settings {
    addr: SocketAddr,
    token: Option<Arc<Token>>,
    allowed: Arc<Allowed>,
    limits: Arc<Limits>,
    #[cfg(feature = "conformance-fixtures")]
    fixtures: Option<Arc<conformance::Fixtures>>,
}

impl Settings {
    pub fn new(addr: SocketAddr, args: &Options) -> Result<Self, SettingsError> {
        let token = Token::load(args.token_file.as_deref())?;
        if token.is_none() && !addr.ip().is_loopback() {
            return Err(SettingsError::PublicWithoutToken(addr));
        }
        Ok(Self {
            addr,
            token: token.map(Arc::new),
            allowed: Arc::new(Allowed::new(
                addr,
                &args.allowed_hosts,
                &args.allowed_origins,
            )?),
            limits: Arc::new(Limits::new(
                args.max_body_bytes,
                args.max_requests,
                args.max_streams,
            )),
            #[cfg(feature = "conformance-fixtures")]
            fixtures: match args.fixtures {
                true => Some(Arc::new(conformance::Fixtures::new()?)),
                false => None,
            },
        })
    }
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
    let token = settings.token.is_some();
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
    close(serving, &settings.limits, &streams, deadline).await;
    EXIT_OK
}

/// The stopped calls' answers go out on their streams; then every stream is closed, by
/// `deadline`.
async fn close(
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
    limits: &Limits,
    streams: &CancellationToken,
    deadline: tokio::time::Instant,
) {
    if timeout_at(deadline, limits.requests_done()).await.is_err() {
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
    let mut mcp = mcp_routes(Arc::new(server), settings, streams).layer(
        axum::middleware::from_fn_with_state(settings.limits.clone(), limits::enforce),
    );
    if let Some(token) = &settings.token {
        mcp = mcp.layer(axum::middleware::from_fn_with_state(
            token.clone(),
            auth::require,
        ));
    }
    if let Some(routes) = beside {
        mcp = mcp.merge(routes);
    }
    mcp.layer(axum::middleware::from_fn_with_state(
        settings.allowed.clone(),
        guard::check,
    ))
}

/// rmcp's Streamable HTTP service at `/mcp`: the agents' handler, or the conformance fixtures
/// around it when a build with them was asked for them.
fn mcp_routes(agents: Arc<AgentServer>, settings: &Settings, streams: CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(streams)
        // `guard` checks Host and Origin, with errors that name the settings.
        .disable_allowed_hosts()
        .with_max_request_body_bytes(settings.limits.max_body_bytes());
    #[cfg(feature = "conformance-fixtures")]
    if let Some(fixtures) = &settings.fixtures {
        let handler = conformance::Fixtured::new(agents, fixtures.clone());
        return serve_at_mcp_path(handler, config);
    }
    serve_at_mcp_path(agents, config)
}

/// Every session (2025-11-25) and every request (2026-07-28) gets a clone of `handler`.
fn serve_at_mcp_path<H: ServerHandler + Clone>(
    handler: H,
    config: StreamableHttpServerConfig,
) -> Router {
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new().nest_service(MCP_PATH, service)
}
