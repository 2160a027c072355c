//! The per-run listener: opened before the run starts, closed when it ends (or dropped). Built
//! on the web front: rmcp's Streamable HTTP service behind the run's random bearer token and the
//! Host/Origin guard (loopback only).

use std::net::SocketAddr;

use axum::Router;
use axum::http::StatusCode;
use cli_agent_engine::{Agent, QuestionEndpoint, RunRequest};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::approve::{APPROVE, Approver, Asking};
use crate::web::{
    Allowed, Bearer, BearerWording, CheckLayer, Guard, MCP_PATH, Refused, Token, mcp_router,
};

/// What a request without the run's token is told.
const NOT_YOURS: &str = "unauthorized: this endpoint serves one run's CLI";

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
        let token = Token::random().map_err(std::io::Error::other)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let bound = listener.local_addr()?;
        let address = QuestionEndpoint {
            url: format!("http://{bound}{MCP_PATH}"),
            token: token.as_str().to_owned(),
            tool: APPROVE.to_owned(),
        };
        let sessions = CancellationToken::new();
        let app = router(approver, token, bound, sessions.clone());
        let server = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::warn!("the permission-question endpoint failed: {error}");
            }
        });
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

/// The approver at `/mcp`, for the run's CLI only: it holds the token, and it reaches the
/// endpoint at 127.0.0.1.
fn router(
    approver: Approver,
    token: Token,
    bound: SocketAddr,
    sessions: CancellationToken,
) -> Router {
    let allowed = Allowed::serving(bound, &[]);
    let wording = BearerWording {
        missing: NOT_YOURS,
        wrong: NOT_YOURS,
    };
    let config = StreamableHttpServerConfig::default().with_cancellation_token(sessions);
    mcp_router(approver, config)
        .layer(CheckLayer::new(Bearer::new(token, wording)))
        .layer(CheckLayer::new(Guard::new(
            allowed,
            |refused| match refused {
                Refused::NoHost => (
                    StatusCode::BAD_REQUEST,
                    "bad request: no Host header".into(),
                ),
                Refused::Host(_) | Refused::Origin(_) => (
                    StatusCode::FORBIDDEN,
                    "forbidden: this endpoint serves one run's CLI, on 127.0.0.1".into(),
                ),
            },
        )))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cli_agent_engine::clis;
    use tokio::net::TcpStream;

    use super::*;
    use crate::mcp::ask::BeyondBounds;

    fn nobody(how: BeyondBounds) -> Asking {
        Asking::nobody(how, None)
    }

    /// The response to a POST of `body` to `url`, with `token` as its bearer and `headers`:
    /// its status line, then its body.
    async fn post(url: &str, token: Option<&str>, headers: &[(&str, &str)], body: &str) -> String {
        let mut request = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("a client")
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("send");
        let status = response.status();
        format!("{status}\n{}", response.text().await.unwrap_or_default())
    }

    /// The status line of a bare `ping` POST to `url`, with `token` as its bearer.
    async fn status(url: &str, token: Option<&str>) -> String {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let response = post(url, token, &[], body).await;
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
        fn request(method: &str) -> (String, [(&str, &str); 2]) {
            let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{meta}}}}}"#
            );
            let headers = [
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", method),
            ];
            (body, headers)
        }
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
