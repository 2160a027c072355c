//! The per-run listener: opened before the run starts, closed when it ends (or dropped).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cli_agent_engine::{Agent, QuestionEndpoint, RunRequest};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::approve::{APPROVE, Approver, Asking};
use crate::bearer::Token;
use crate::dashboard::Secret;

/// Where the endpoint serves MCP.
const MCP_PATH: &str = "/mcp";

/// A run's question endpoint, listening until [`Endpoint::close`] or drop.
pub struct Endpoint {
    address: QuestionEndpoint,
    sessions: CancellationToken,
    server: JoinHandle<()>,
}

impl Endpoint {
    /// An endpoint for `agent`'s `run` if its CLI has a hook and its level asks at all; `None` otherwise
    /// or when it cannot listen (the CLI then refuses on its own, as without a hook).
    pub async fn open(agent: Agent, run: &RunRequest, asking: Asking) -> Option<Self> {
        agent.cli().question_hook()?;
        let approver = Approver::for_run(agent, run, asking)?;
        match Self::listen(approver).await {
            Ok(endpoint) => {
                let url = &endpoint.address.url;
                tracing::info!(%agent, %url, "the CLI's permission questions go to {url}");
                Some(endpoint)
            }
            Err(error) => {
                tracing::warn!(%agent, "no endpoint for the CLI's permission questions: {error}");
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cli_agent_engine::clis;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;
    use crate::mcp::ask::BeyondBounds;

    fn nobody(how: BeyondBounds) -> Asking {
        Asking::nobody(how, None)
    }

    /// The response to a POST of `body` to `url`, with `token` as its bearer and `headers`.
    async fn post(url: &str, token: Option<&str>, headers: &str, body: &str) -> String {
        let authority = url.trim_start_matches("http://").trim_end_matches(MCP_PATH);
        let mut stream = TcpStream::connect(authority).await.expect("connect");
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        let request = format!(
            "POST {MCP_PATH} HTTP/1.1\r\nHost: {authority}\r\n{auth}{headers}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.expect("send");
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response).await;
        String::from_utf8_lossy(&response).into_owned()
    }

    /// The status line of a bare `ping` POST to `url`, with `token` as its bearer.
    async fn status(url: &str, token: Option<&str>) -> String {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let response = post(url, token, "", body).await;
        response.lines().next().unwrap_or_default().to_owned()
    }

    /// An endpoint for a claude run nobody can be asked for.
    async fn claudes_endpoint() -> Endpoint {
        let run = RunRequest::new("fix it", "/tmp");
        let how = BeyondBounds::Ask {
            timeout: Duration::from_secs(1),
        };
        Endpoint::open(clis::CLAUDE, &run, nobody(how))
            .await
            .expect("claude has a hook")
    }

    #[tokio::test]
    async fn only_the_runs_token_gets_in_and_nothing_listens_after_close() {
        let endpoint = claudes_endpoint().await;
        let address = endpoint.address();
        assert!(
            address.url.starts_with("http://127.0.0.1:"),
            "{}",
            address.url
        );
        assert!(status(&address.url, None).await.contains("401"));
        assert!(status(&address.url, Some("guess")).await.contains("401"));
        let with_token = status(&address.url, Some(&address.token)).await;
        assert!(!with_token.contains("401"), "{with_token}");

        endpoint.close().await;
        let authority = address
            .url
            .trim_start_matches("http://")
            .trim_end_matches(MCP_PATH);
        assert!(TcpStream::connect(authority).await.is_err());
    }

    /// rmcp 3.11 answers a list method of a capability the server does not advertise with
    /// -32601 (method not found): the endpoint advertises its tool, nothing else.
    #[tokio::test]
    async fn the_endpoint_lists_its_tool_and_answers_other_lists_method_not_found() {
        let endpoint = claudes_endpoint().await;
        let address = endpoint.address();
        let request = |method: &str| {
            let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{meta}}}}}"#
            );
            let headers = format!("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n");
            (body, headers)
        };
        let (body, headers) = request("tools/list");
        let tools = post(&address.url, Some(&address.token), &headers, &body).await;
        assert!(tools.contains(r#""name":"approve""#), "{tools}");
        for method in ["prompts/list", "resources/list", "resources/templates/list"] {
            let (body, headers) = request(method);
            let listed = post(&address.url, Some(&address.token), &headers, &body).await;
            assert!(listed.contains(r#""code":-32601"#), "{method}: {listed}");
        }
        endpoint.close().await;
    }

    #[tokio::test]
    async fn no_endpoint_for_a_cli_without_a_hook_or_at_unlimited() {
        let how = BeyondBounds::Refuse;
        let codex = RunRequest::new("fix it", "/tmp");
        assert!(
            Endpoint::open(clis::CODEX, &codex, nobody(how))
                .await
                .is_none()
        );
        let mut claude = RunRequest::new("fix it", "/tmp");
        claude.permission = cli_agent_engine::Permission::Unlimited;
        assert!(
            Endpoint::open(clis::CLAUDE, &claude, nobody(how))
                .await
                .is_none()
        );
    }
}
