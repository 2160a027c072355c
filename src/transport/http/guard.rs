//! DNS-rebinding protection: a page on `evil.example.com` whose name an attacker points at
//! 127.0.0.1 makes the browser send `Host: evil.example.com` and `Origin: http://evil.example.com`.
//! A request is served only if its Host names this server (loopback, the bound address, or a
//! name allowed with `--http-allowed-host`), and, when it carries an Origin, that origin's host
//! is allowed too or the origin is listed with `--http-allowed-origin`. Clients that are not
//! browsers send no Origin and pass on their Host alone.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::uri::{Authority, Uri};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::refusal::refusal;

#[derive(Debug, thiserror::Error)]
#[error(
    "--http-allowed-origin {0:?} is not an origin: give scheme://host[:port], e.g. https://ide.example.com"
)]
pub struct BadOrigin(String);

/// The hosts and origins this server answers.
#[derive(Debug)]
pub struct Allowed {
    /// Lowercase `host` (any port) or `host:port` entries.
    hosts: Vec<String>,
    /// Lowercase `scheme://host[:port]` entries.
    origins: Vec<String>,
}

impl Allowed {
    pub fn new(addr: SocketAddr, hosts: &[String], origins: &[String]) -> Result<Self, BadOrigin> {
        let mut allowed: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        if !addr.ip().is_unspecified() {
            allowed.push(addr.ip().to_string());
        }
        allowed.extend(hosts.iter().map(|host| host.trim().to_ascii_lowercase()));
        let origins = origins
            .iter()
            .map(|origin| {
                let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
                let uri: Uri = origin.parse().map_err(|_| BadOrigin(origin.clone()))?;
                match (uri.scheme(), uri.authority()) {
                    (Some(_), Some(_)) => Ok(origin),
                    _ => Err(BadOrigin(origin)),
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            hosts: allowed,
            origins,
        })
    }

    fn host_allowed(&self, authority: &Authority) -> bool {
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let with_port = authority.as_str().to_ascii_lowercase();
        self.hosts
            .iter()
            .any(|allowed| *allowed == host || *allowed == with_port)
    }

    /// Why a request must not be served, if it must not.
    fn refuse(&self, request: &Request) -> Option<(StatusCode, String)> {
        let headers = request.headers();
        let Some(host) = headers.get(header::HOST) else {
            return Some((
                StatusCode::BAD_REQUEST,
                "bad request: no Host header".to_owned(),
            ));
        };
        let host = String::from_utf8_lossy(host.as_bytes());
        match host.parse::<Authority>() {
            Ok(authority) if self.host_allowed(&authority) => {}
            _ => {
                return Some((
                    StatusCode::FORBIDDEN,
                    format!(
                        "forbidden: Host {host:?} is not this server's (DNS-rebinding protection); \
                         allow it with --http-allowed-host or CAM_HTTP_ALLOWED_HOSTS"
                    ),
                ));
            }
        }
        let origin = headers.get(header::ORIGIN)?;
        let origin = String::from_utf8_lossy(origin.as_bytes()).to_ascii_lowercase();
        let own_host = origin
            .parse::<Uri>()
            .ok()
            .and_then(|uri| uri.authority().cloned())
            .is_some_and(|authority| self.host_allowed(&authority));
        if own_host || self.origins.contains(&origin) {
            return None;
        }
        Some((
            StatusCode::FORBIDDEN,
            format!(
                "forbidden: Origin {origin:?} may not call this server (DNS-rebinding protection); \
                 allow it with --http-allowed-origin or CAM_HTTP_ALLOWED_ORIGINS"
            ),
        ))
    }
}

/// The middleware: refuse requests for another host or from a foreign origin.
pub async fn check(State(allowed): State<Arc<Allowed>>, request: Request, next: Next) -> Response {
    if let Some((status, message)) = allowed.refuse(&request) {
        tracing::warn!(%status, %message, "refused an HTTP request");
        return refusal(status, &message);
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(host: Option<&str>, origin: Option<&str>) -> Request {
        let mut builder = Request::builder().uri("/mcp");
        if let Some(host) = host {
            builder = builder.header(header::HOST, host);
        }
        if let Some(origin) = origin {
            builder = builder.header(header::ORIGIN, origin);
        }
        builder.body(axum::body::Body::empty()).expect("request")
    }

    fn allowed() -> Allowed {
        let addr: SocketAddr = "10.1.2.3:8765".parse().expect("addr");
        Allowed::new(
            addr,
            &[
                "Build.Example.com".to_owned(),
                "proxy.example.com:443".to_owned(),
            ],
            &["https://ide.example.com/".to_owned()],
        )
        .expect("settings")
    }

    #[test]
    fn loopback_the_bound_address_and_listed_names_are_served() {
        let allowed = allowed();
        for host in [
            "localhost:8765",
            "127.0.0.1:8765",
            "[::1]:8765",
            "10.1.2.3:8765",
            "build.example.com",
            "BUILD.example.com:8765",
            "proxy.example.com:443",
        ] {
            assert_eq!(allowed.refuse(&request(Some(host), None)), None, "{host}");
        }
    }

    #[test]
    fn a_foreign_host_or_origin_is_forbidden_and_no_host_is_a_bad_request() {
        let allowed = allowed();
        let status = |host, origin| {
            allowed
                .refuse(&request(host, origin))
                .map(|(status, _)| status)
        };
        assert_eq!(
            status(Some("evil.example.com"), None),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(Some("proxy.example.com:444"), None),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(Some("localhost:8765"), Some("http://evil.example.com")),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(Some("localhost:8765"), Some("null")),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(status(None, None), Some(StatusCode::BAD_REQUEST));
        assert_eq!(
            status(Some("localhost:8765"), Some("http://localhost:8765")),
            None
        );
        assert_eq!(
            status(Some("localhost:8765"), Some("https://ide.example.com")),
            None
        );
    }

    #[test]
    fn an_allowed_origin_must_be_an_origin() {
        let addr: SocketAddr = "127.0.0.1:0".parse().expect("addr");
        assert!(Allowed::new(addr, &[], &["ide.example.com".to_owned()]).is_err());
    }
}
