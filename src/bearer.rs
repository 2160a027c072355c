//! A bearer token that every request must present, compared in the same time whatever the
//! bytes (`subtle`), so a client cannot find it one byte at a time by timing refusals.

use axum::http::HeaderValue;
use subtle::ConstantTimeEq;

/// The secret every request must present. Its `Debug` never shows it.
pub struct Token(Box<[u8]>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    pub(crate) fn new(token: &str) -> Self {
        Self(token.as_bytes().into())
    }

    /// Whether an `Authorization` header carries this token (the scheme in any case).
    pub(crate) fn accepts(&self, authorization: Option<&HeaderValue>) -> bool {
        let Some((scheme, given)) = authorization
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split_once(' '))
        else {
            return false;
        };
        scheme.eq_ignore_ascii_case("bearer") && bool::from(self.0.ct_eq(given.trim().as_bytes()))
    }
}
