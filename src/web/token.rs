//! The one token type of the front: a secret a request must show (a bearer token, a login
//! token, a session cookie, a CSRF value), random from the OS or given by the user, compared
//! in the same time whatever the bytes (`subtle`), so that a client cannot find it one byte at
//! a time by timing refusals.

use subtle::ConstantTimeEq;

/// A secret token. Its `Debug` never shows it.
pub struct Token(Box<str>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// A token the user chose (`CAM_HTTP_TOKEN`, a token file).
    pub fn new(value: &str) -> Self {
        Self(value.into())
    }

    /// 256 random bits from the OS, as 64 hex digits.
    pub fn random() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Self(hex.into()))
    }

    /// The token itself, for the one place that hands it out (a printed URL, a page, the
    /// environment of a run).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `guess` is the token. How much of a guess matched does not show in the time
    /// taken; only its length does, and the length is no secret.
    pub fn matches(&self, guess: &str) -> bool {
        self.0.as_bytes().ct_eq(guess.as_bytes()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_matches() {
        let token = Token::new("s3cret-token");
        assert!(token.matches("s3cret-token"));
        for wrong in ["s3cret-toke", "s3cret-token2", "", "S3CRET-TOKEN"] {
            assert!(!token.matches(wrong), "{wrong}");
        }
        assert_eq!(format!("{token:?}"), "Token(<redacted>)");
    }

    #[test]
    fn random_tokens_are_64_hex_digits_and_differ() {
        let (one, two) = (Token::random().unwrap(), Token::random().unwrap());
        assert_eq!(one.as_str().len(), 64);
        assert!(one.as_str().chars().all(|c| c.is_ascii_hexdigit()));
        assert!(!one.matches(two.as_str()));
    }
}
