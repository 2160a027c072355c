//! The per-run listener: opened before the run starts, closed when it ends (or dropped).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cli_agent_engine::{QuestionEndpoint, RunRequest};
use rmcp::RoleServer;
use rmcp::service::Peer;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::approve::{APPROVE, Approver};
use crate::bearer::Token;
use crate::dashboard::Secret;
use crate::mcp::ask::BeyondBounds;

/// Where the endpoint serves MCP.
const MCP_PATH: &str = "/mcp";

/// A run's question endpoint, listening until [`Endpoint::close`] or drop.
pub struct Endpoint {
    address: QuestionEndpoint,
    sessions: CancellationToken,
    server: JoinHandle<()>,
}

impl Endpoint {
    /// An endpoint for `run` if its CLI has a hook and its level asks at all; `None` otherwise
    /// or when it cannot listen (the CLI then refuses on its own, as without a hook).
    pub async fn open(
        run: &RunRequest,
        peer: Option<Peer<RoleServer>>,
        how: BeyondBounds,
    ) -> Option<Self> {
        run.agent.cli().question_hook()?;
        let approver = Approver::for_run(run, peer, how)?;
        match Self::listen(approver).await {
            Ok(endpoint) => {
                let url = &endpoint.address.url;
                tracing::info!(agent = %run.agent, %url, "the CLI's permission questions go to {url}");
                Some(endpoint)
            }
            Err(error) => {
                tracing::warn!(agent = %run.agent, "no endpoint for the CLI's permission questions: {error}");
                None
            }
        }
    }

    async fn listen(approver: Approver) -> std::io::Result<Self> {
        let secret = Secret::random().map_err(std::io::Error::other)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}{MCP_PATH}", listener.local_addr()?);
        let sessions = CancellationToken::new();
        let config =
            StreamableHttpServerConfig::default().with_cancellation_token(sessions.clone());
        let service = StreamableHttpService::new(
            move || Ok(approver.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let token = Arc::new(Token::new(secret.as_str()));
        let app = Router::new()
            .nest_service(MCP_PATH, service)
            .layer(axum::middleware::from_fn_with_state(token, require));
        let server = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::warn!("the permission-question endpoint failed: {error}");
            }
        });
        let address = QuestionEndpoint {
            url,
            token: secret.as_str().to_owned(),
            tool: APPROVE.to_owned(),
        };
        Ok(Self {
            address,
            sessions,
            server,
        })
    }

    /// What the run's command line needs to reach it.
    pub fn address(&self) -> QuestionEndpoint {
        self.address.clone()
    }

    /// Stop listening and end its sessions; connecting afterwards is refused.
    pub async fn close(mut self) {
        self.sessions.cancel();
        self.server.abort();
        let _ = (&mut self.server).await;
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.sessions.cancel();
        self.server.abort();
    }
}

/// Only the run's CLI, which holds the token, gets past this.
async fn require(State(token): State<Arc<Token>>, request: Request, next: Next) -> Response {
    if token.accepts(request.headers().get(header::AUTHORIZATION)) {
        return next.run(request).await;
    }
    (
        StatusCode::UNAUTHORIZED,
        "unauthorized: this endpoint serves one run's CLI",
    )
        .into_response()
}
