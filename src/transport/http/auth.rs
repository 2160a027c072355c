//! The bearer token: every request to `/mcp` must carry `Authorization: Bearer <token>` when
//! one is set. The comparison takes the same time whatever the bytes (`subtle`), so a client
//! cannot find the token one byte at a time by timing refusals.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::refusal::refusal;
pub use crate::bearer::Token;

/// Where the token comes from when no file is given.
pub const TOKEN_ENV: &str = "CAM_HTTP_TOKEN";

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "cannot read the HTTP token file {path}: {source}; give a readable file to --http-token-file"
    )]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the HTTP token file {0} has no token on its first line: write one there (e.g. `openssl rand -hex 32`)"
    )]
    EmptyFile(PathBuf),
    #[error("{TOKEN_ENV} is set but empty: set it to a token, or unset it")]
    EmptyEnv,
}

impl Token {
    /// The token from `file` (its first line), else from `CAM_HTTP_TOKEN`; none without either.
    pub fn load(file: Option<&Path>) -> Result<Option<Self>, TokenError> {
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| TokenError::Unreadable {
                path: path.to_owned(),
                source,
            })?;
            let line = text.lines().next().unwrap_or_default().trim();
            if line.is_empty() {
                return Err(TokenError::EmptyFile(path.to_owned()));
            }
            return Ok(Some(Self::new(line)));
        }
        match std::env::var(TOKEN_ENV) {
            Ok(value) if value.trim().is_empty() => Err(TokenError::EmptyEnv),
            Ok(value) => Ok(Some(Self::new(value.trim()))),
            Err(_) => Ok(None),
        }
    }
}

/// The middleware: a request without the token is answered 401 and goes no further.
pub async fn require(State(token): State<Arc<Token>>, request: Request, next: Next) -> Response {
    let authorization = request.headers().get(header::AUTHORIZATION);
    if token.accepts(authorization) {
        return next.run(request).await;
    }
    let (challenge, message) = if authorization.is_some() {
        (
            r#"Bearer realm="cli-agent-mcp", error="invalid_token""#,
            "unauthorized: the bearer token is wrong: send the one set by CAM_HTTP_TOKEN or --http-token-file",
        )
    } else {
        (
            r#"Bearer realm="cli-agent-mcp""#,
            "unauthorized: send `Authorization: Bearer <token>` with the token set by CAM_HTTP_TOKEN or --http-token-file",
        )
    };
    let mut response = refusal(StatusCode::UNAUTHORIZED, message);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(value: &str) -> HeaderValue {
        HeaderValue::from_str(value).expect("a header value")
    }

    #[test]
    fn only_the_exact_token_under_the_bearer_scheme_is_accepted() {
        let token = Token::new("s3cret-token");
        assert!(token.accepts(Some(&header("Bearer s3cret-token"))));
        assert!(token.accepts(Some(&header("bearer s3cret-token"))));
        for wrong in [
            "Bearer s3cret-toke",
            "Bearer s3cret-token2",
            "Bearer ",
            "Basic s3cret-token",
            "s3cret-token",
        ] {
            assert!(!token.accepts(Some(&header(wrong))), "{wrong}");
        }
        assert!(!token.accepts(None));
    }

    #[test]
    fn the_token_file_gives_its_first_line_and_an_empty_one_is_an_error() {
        let dir = std::env::temp_dir().join(format!("cam-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("token");
        std::fs::write(&file, "abc123\nignored\n").expect("write");
        let token = Token::load(Some(&file)).expect("load").expect("a token");
        assert!(token.accepts(Some(&header("Bearer abc123"))));
        assert_eq!(format!("{token:?}"), "Token(<redacted>)");
        std::fs::write(&file, "\n").expect("write");
        assert!(matches!(
            Token::load(Some(&file)),
            Err(TokenError::EmptyFile(_))
        ));
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
