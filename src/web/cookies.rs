//! Cookies: those a request carries, read as an extractor ([`Cookies`]), and the `Set-Cookie`
//! of a login session ([`session_cookie`]).
//!
//! Our own rather than `axum-extra`'s `CookieJar`: the front sets one cookie, a session
//! secret of hex digits with fixed attributes, and reads it back; the `cookie` crate the jar
//! stands on would bring date parsing and formatting (the `time` crate) for attributes this
//! server never sends, into a binary whose size and start are measured.

use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::header::{COOKIE, InvalidHeaderValue};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue};

/// The `name=value` pairs of every `Cookie` header of a request (RFC 6265 §4.2: pairs
/// separated by `;`, a value possibly in double quotes). A pair without `=` is skipped.
#[derive(Debug, Default)]
pub struct Cookies(Vec<(String, String)>);

impl Cookies {
    pub fn from_headers(headers: &HeaderMap) -> Self {
        let pairs = headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.split_once('='))
            .map(|(name, value)| {
                let value = value.trim();
                let value = value
                    .strip_prefix('"')
                    .and_then(|value| value.strip_suffix('"'))
                    .unwrap_or(value);
                (name.trim().to_owned(), value.to_owned())
            })
            .collect();
        Self(pairs)
    }

    /// The values sent under `name`: a browser may send several cookies of one name (set by
    /// different paths or hosts).
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        self.0
            .iter()
            .filter(move |(found, _)| found == name)
            .map(|(_, value)| value.as_str())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Cookies {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self::from_headers(&parts.headers))
    }
}

/// The `Set-Cookie` value of a session: for the whole site, out of scripts' reach
/// (`HttpOnly`), and never sent with a request another site starts (`SameSite=Strict`).
/// An error only for a name or value that cannot be in a header.
pub fn session_cookie(name: &str, value: &str) -> Result<HeaderValue, InvalidHeaderValue> {
    HeaderValue::from_str(&format!(
        "{name}={value}; Path=/; HttpOnly; SameSite=Strict"
    ))
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::extract::Request;

    use super::*;

    async fn cookies(headers: &[&str]) -> Cookies {
        let mut request = Request::get("/");
        for header in headers {
            request = request.header(COOKIE, *header);
        }
        let (mut parts, _) = request.body(Body::empty()).unwrap().into_parts();
        let Ok(cookies) = Cookies::from_request_parts(&mut parts, &()).await;
        cookies
    }

    #[tokio::test]
    async fn every_pair_of_every_cookie_header_is_read_by_name() {
        let cookies = cookies(&["a=1; session=abc ;b=2", "session=\"def\"; broken; c=x=y"]).await;
        assert_eq!(
            cookies.values("session").collect::<Vec<_>>(),
            ["abc", "def"]
        );
        assert_eq!(cookies.values("a").collect::<Vec<_>>(), ["1"]);
        assert_eq!(cookies.values("c").collect::<Vec<_>>(), ["x=y"]);
        assert_eq!(cookies.values("broken").count(), 0);
        assert_eq!(
            cookies.values("Session").count(),
            0,
            "names are case-sensitive"
        );
    }

    #[tokio::test]
    async fn a_request_without_cookies_has_none() {
        assert_eq!(cookies(&[]).await.values("session").count(), 0);
    }

    #[test]
    fn the_session_cookie_is_http_only_and_strict() {
        let cookie = session_cookie("cam_1", "abc").unwrap();
        assert_eq!(cookie, "cam_1=abc; Path=/; HttpOnly; SameSite=Strict");
        assert!(session_cookie("cam_1", "a\nb").is_err());
    }
}
