//! The bearer token of `serve --http`: where it comes from (the first line of
//! `--http-token-file`, else `CAM_HTTP_TOKEN`) and what a request without it is told. The check
//! itself is the front's ([`crate::web::Bearer`]): every request to `/mcp` must carry it when
//! one is set.

use std::path::{Path, PathBuf};

use crate::web::{BearerWording, Token};

/// Where the token comes from when no file is given.
pub const TOKEN_ENV: &str = "CAM_HTTP_TOKEN";

/// What a request without the token, or with another, is told.
pub const WORDING: BearerWording = BearerWording {
    missing: "unauthorized: send `Authorization: Bearer <token>` with the token set by CAM_HTTP_TOKEN or --http-token-file",
    wrong: "unauthorized: the bearer token is wrong: send the one set by CAM_HTTP_TOKEN or --http-token-file",
};

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

/// The token from `file` (its first line), else from `CAM_HTTP_TOKEN`; none without either.
pub fn load(file: Option<&Path>) -> Result<Option<Token>, TokenError> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|source| TokenError::Unreadable {
            path: path.to_owned(),
            source,
        })?;
        let line = text.lines().next().unwrap_or_default().trim();
        if line.is_empty() {
            return Err(TokenError::EmptyFile(path.to_owned()));
        }
        return Ok(Some(Token::new(line)));
    }
    match std::env::var(TOKEN_ENV) {
        Ok(value) if value.trim().is_empty() => Err(TokenError::EmptyEnv),
        Ok(value) => Ok(Some(Token::new(value.trim()))),
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_file_gives_its_first_line_and_an_empty_one_is_an_error() {
        let dir = cli_agent_test_support::common::temp_dir("cam-token");
        let file = dir.path().join("token");
        std::fs::write(&file, "abc123\nignored\n").expect("write");
        let token = load(Some(&file)).expect("load").expect("a token");
        assert!(token.matches("abc123"));
        assert_eq!(format!("{token:?}"), "Token(<redacted>)");
        std::fs::write(&file, "\n").expect("write");
        assert!(matches!(load(Some(&file)), Err(TokenError::EmptyFile(_))));
    }
}
