//! The bearer token: a request must carry `Authorization: Bearer <token>` (the scheme in any
//! case). A request without it, or with another token, is answered 401 with a `Bearer`
//! challenge (RFC 6750) and the server's words for what to send.

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::check::Check;
use super::refusal::refusal;
use super::token::Token;

/// What a server tells a client that sent no token, or the wrong one.
#[derive(Clone, Copy, Debug)]
pub struct BearerWording {
    pub missing: &'static str,
    pub wrong: &'static str,
}

/// The token a server's requests must carry.
#[derive(Debug)]
pub struct Bearer {
    token: Token,
    wording: BearerWording,
}

impl Bearer {
    pub fn new(token: Token, wording: BearerWording) -> Self {
        Self { token, wording }
    }

    /// Whether an `Authorization` header carries the token.
    fn accepts(&self, authorization: &HeaderValue) -> bool {
        let Some((scheme, given)) = authorization
            .to_str()
            .ok()
            .and_then(|value| value.split_once(' '))
        else {
            return false;
        };
        scheme.eq_ignore_ascii_case("bearer") && self.token.matches(given.trim())
    }
}

impl Check for Bearer {
    fn answer(&self, request: &Request) -> Option<Response> {
        let (challenge, message) = match request.headers().get(header::AUTHORIZATION) {
            Some(given) if self.accepts(given) => return None,
            Some(_) => (
                r#"Bearer realm="cli-agent-mcp", error="invalid_token""#,
                self.wording.wrong,
            ),
            None => (r#"Bearer realm="cli-agent-mcp""#, self.wording.missing),
        };
        let mut response = refusal(StatusCode::UNAUTHORIZED, message);
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(challenge),
        );
        Some(response)
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;

    use super::*;

    const WORDING: BearerWording = BearerWording {
        missing: "send one",
        wrong: "not that one",
    };

    fn answer(authorization: Option<&str>) -> Option<Response> {
        let bearer = Bearer::new(Token::new("s3cret-token"), WORDING);
        let mut request = Request::get("/mcp");
        if let Some(value) = authorization {
            request = request.header(header::AUTHORIZATION, value);
        }
        bearer.answer(&request.body(Body::empty()).unwrap())
    }

    fn challenge(response: &Response) -> &str {
        let challenge = response.headers().get(header::WWW_AUTHENTICATE);
        challenge.and_then(|value| value.to_str().ok()).unwrap()
    }

    #[test]
    fn only_the_exact_token_under_the_bearer_scheme_gets_through() {
        assert!(answer(Some("Bearer s3cret-token")).is_none());
        assert!(answer(Some("bearer s3cret-token")).is_none());
        for wrong in [
            "Bearer s3cret-toke",
            "Bearer s3cret-token2",
            "Bearer ",
            "Basic s3cret-token",
            "s3cret-token",
        ] {
            let refused = answer(Some(wrong)).expect(wrong);
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{wrong}");
            assert!(challenge(&refused).contains("invalid_token"), "{wrong}");
        }
        let missing = answer(None).expect("refused");
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(challenge(&missing), r#"Bearer realm="cli-agent-mcp""#);
    }
}
