//! DNS-rebinding protection: a page on `evil.example.com` whose name an attacker points at
//! 127.0.0.1 makes the browser send `Host: evil.example.com` and `Origin: http://evil.example.com`.
//! A request is served only if its Host names this server ([`Allowed`]), and, when it carries
//! an Origin, that origin's host is allowed too or the origin is listed. Clients that are not
//! browsers send no Origin and pass on their Host alone. Each server words the refusals
//! ([`Refused`]) in its own terms.

use std::net::SocketAddr;

use axum::extract::Request;
use axum::http::uri::{Authority, Uri};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;

use super::check::Check;
use super::refusal::refusal;

/// An allowed origin that is not `scheme://host[:port]`, as given.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not an origin: give scheme://host[:port], e.g. https://ide.example.com")]
pub struct NotAnOrigin(pub String);

/// The hosts and origins a server answers.
#[derive(Debug)]
pub struct Allowed {
    /// Lowercase `host` (any port) or `host:port` entries.
    hosts: Vec<String>,
    /// Lowercase `scheme://host[:port]` entries.
    origins: Vec<String>,
}

/// Why a request is refused.
#[derive(Debug, PartialEq)]
pub enum Refused {
    NoHost,
    /// A Host that names another server, as sent.
    Host(String),
    /// A browser's Origin from elsewhere, lowercase.
    Origin(String),
}

impl Allowed {
    /// A server bound to `addr`: loopback by any name and port, the bound address, and `hosts`
    /// (`host` for any port, `host:port` for one).
    pub fn serving(addr: SocketAddr, hosts: &[String]) -> Self {
        let mut allowed: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        if !addr.ip().is_unspecified() {
            allowed.push(addr.ip().to_string());
        }
        allowed.extend(hosts.iter().map(|host| host.trim().to_ascii_lowercase()));
        Self {
            hosts: allowed,
            origins: Vec::new(),
        }
    }

    /// Also the browser `origins` listed (`scheme://host[:port]`), whatever their host.
    pub fn with_origins(mut self, origins: &[String]) -> Result<Self, NotAnOrigin> {
        for origin in origins {
            let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
            let uri: Uri = origin.parse().map_err(|_| NotAnOrigin(origin.clone()))?;
            match (uri.scheme(), uri.authority()) {
                (Some(_), Some(_)) => self.origins.push(origin),
                _ => return Err(NotAnOrigin(origin)),
            }
        }
        Ok(self)
    }

    /// Exactly these `host:port` values, as browsers send them, and origins of those hosts.
    pub fn exactly(hosts: impl IntoIterator<Item = String>) -> Self {
        Self {
            hosts: hosts
                .into_iter()
                .map(|host| host.to_ascii_lowercase())
                .collect(),
            origins: Vec::new(),
        }
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

    /// Why a request with these headers must not be served, if it must not.
    pub fn refuse(&self, headers: &HeaderMap) -> Option<Refused> {
        let Some(host) = headers.get(header::HOST) else {
            return Some(Refused::NoHost);
        };
        let host = String::from_utf8_lossy(host.as_bytes());
        match host.parse::<Authority>() {
            Ok(authority) if self.host_allowed(&authority) => {}
            _ => return Some(Refused::Host(host.into_owned())),
        }
        let origin = headers.get(header::ORIGIN)?;
        let origin = String::from_utf8_lossy(origin.as_bytes()).to_ascii_lowercase();
        let own_host = origin
            .parse::<Uri>()
            .ok()
            .and_then(|uri| uri.authority().cloned())
            .is_some_and(|authority| self.host_allowed(&authority));
        match own_host || self.origins.contains(&origin) {
            true => None,
            false => Some(Refused::Origin(origin)),
        }
    }
}

/// The guard of one server: what it allows, and how it words a refusal (its status and text).
pub struct Guard {
    allowed: Allowed,
    wording: fn(&Refused) -> (StatusCode, String),
}

impl Guard {
    pub fn new(allowed: Allowed, wording: fn(&Refused) -> (StatusCode, String)) -> Self {
        Self { allowed, wording }
    }
}

impl Check for Guard {
    fn answer(&self, request: &Request) -> Option<Response> {
        let refused = self.allowed.refuse(request.headers())?;
        let (status, message) = (self.wording)(&refused);
        tracing::warn!(%status, %message, "refused an HTTP request");
        Some(refusal(status, &message))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in [(header::HOST, host), (header::ORIGIN, origin)] {
            if let Some(value) = value {
                headers.insert(name, HeaderValue::from_str(value).unwrap());
            }
        }
        headers
    }

    fn allowed() -> Allowed {
        let addr: SocketAddr = "10.1.2.3:8765".parse().expect("addr");
        let hosts = ["Build.Example.com", "proxy.example.com:443"].map(str::to_owned);
        Allowed::serving(addr, &hosts)
            .with_origins(&["https://ide.example.com/".to_owned()])
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
            assert_eq!(allowed.refuse(&headers(Some(host), None)), None, "{host}");
        }
    }

    #[test]
    fn a_foreign_host_or_origin_is_refused_and_so_is_no_host() {
        let allowed = allowed();
        let refused = |host, origin| allowed.refuse(&headers(host, origin));
        let local = Some("localhost:8765");
        assert_eq!(
            refused(Some("evil.example.com"), None),
            Some(Refused::Host("evil.example.com".to_owned()))
        );
        assert_eq!(
            refused(Some("proxy.example.com:444"), None),
            Some(Refused::Host("proxy.example.com:444".to_owned()))
        );
        assert_eq!(
            refused(local, Some("http://Evil.example.com")),
            Some(Refused::Origin("http://evil.example.com".to_owned()))
        );
        assert_eq!(
            refused(local, Some("null")),
            Some(Refused::Origin("null".to_owned()))
        );
        assert_eq!(refused(None, None), Some(Refused::NoHost));
        assert_eq!(refused(local, Some("http://localhost:8765")), None);
        assert_eq!(refused(local, Some("https://ide.example.com")), None);
    }

    #[test]
    fn an_allowed_origin_must_be_an_origin() {
        let addr: SocketAddr = "127.0.0.1:0".parse().expect("addr");
        let origins = ["ide.example.com".to_owned()];
        assert!(Allowed::serving(addr, &[]).with_origins(&origins).is_err());
    }

    /// The dashboard's: its printed address and `localhost` on its port, nothing else.
    #[test]
    fn exact_hosts_are_served_on_their_port_only_and_so_are_their_origins() {
        let allowed = Allowed::exactly(["127.0.0.1:4000".to_owned(), "Localhost:4000".to_owned()]);
        for host in ["127.0.0.1:4000", "localhost:4000", "LOCALHOST:4000"] {
            assert_eq!(allowed.refuse(&headers(Some(host), None)), None, "{host}");
        }
        for host in ["127.0.0.1", "127.0.0.1:4001", "evil.example:4000"] {
            let refused = allowed.refuse(&headers(Some(host), None));
            assert_eq!(refused, Some(Refused::Host(host.to_owned())));
        }
        let own = Some("http://127.0.0.1:4000");
        assert_eq!(allowed.refuse(&headers(Some("127.0.0.1:4000"), own)), None);
        let other = Some("http://127.0.0.1:4001");
        assert!(
            allowed
                .refuse(&headers(Some("127.0.0.1:4000"), other))
                .is_some()
        );
    }
}
