//! Reading a failure's [`ErrorKind`] from what the CLI said about it, so a caller gets a kind
//! and a hint rather than one CLI's sentence. An HTTP status decides when there is one; else
//! the wording does: the providers', HTTP's and the runtimes' wording here, which any CLI may
//! pass on, and each CLI's own sentences from its module ([`Cli::error_wording`]).

use crate::cli::Cli;
use crate::outcome::ErrorKind;

/// Wording every CLI may pass on, lower case, by kind. The kinds are tried in this order, each
/// with these words and the CLI's own for it; every kind a CLI's wording names must be here.
const WORDING: &[(ErrorKind, &[&str])] = &[
    (
        ErrorKind::Authentication,
        &[
            "unauthorized",
            "unauthenticated",
            "authentication",
            "invalid api key",
            "not logged in",
        ],
    ),
    (
        ErrorKind::RateLimited,
        &[
            "too many requests",
            "rate limit",
            "rate_limit",
            "resource_exhausted",
            "quota",
        ],
    ),
    (ErrorKind::SessionNotFound, &["session not found"]),
    (ErrorKind::StreamCut, &["stream ended"]),
    (
        ErrorKind::Connection,
        &[
            "connection refused",
            // Node's and Bun's codes for it.
            "econnrefused",
            "connectionrefused",
            "unable to connect",
            "fetch failed",
        ],
    ),
    (
        ErrorKind::ServerError,
        &["internal server error", "overloaded", "server_error"],
    ),
    // A CLI may quote a 400's body without its status; the provider's error type says it.
    (
        ErrorKind::BadRequest,
        &["invalid_request_error", "invalid_argument", "bad request"],
    ),
];

impl ErrorKind {
    /// Read the kind of a failure from what `cli` said about it.
    pub fn classify(cli: &dyn Cli, http_status: Option<u16>, message: &str) -> Self {
        let status = http_status.or_else(|| status_in(message));
        if let Some(kind) = status.and_then(Self::of_status) {
            return kind;
        }
        let lower = message.to_ascii_lowercase();
        let says = |words: &[&str]| words.iter().any(|word| lower.contains(word));
        let own = cli.error_wording();
        let own_says = |kind: ErrorKind| {
            own.iter()
                .any(|(own_kind, words)| *own_kind == kind && says(words))
        };
        WORDING
            .iter()
            .find(|(kind, shared)| says(shared) || own_says(*kind))
            .map_or(Self::AgentError, |(kind, _)| *kind)
    }

    /// The kind an HTTP status means, for the statuses that mean one.
    fn of_status(status: u16) -> Option<Self> {
        match status {
            401 | 403 => Some(Self::Authentication),
            429 => Some(Self::RateLimited),
            500..=599 => Some(Self::ServerError),
            400 | 404 | 413 | 422 => Some(Self::BadRequest),
            _ => None,
        }
    }
}

/// An HTTP status written in an error message: `401 Unauthorized`, `(429)`, `"code":500`.
fn status_in(message: &str) -> Option<u16> {
    let bytes = message.as_bytes();
    (0..bytes.len().saturating_sub(2)).find_map(|start| {
        let digits = &bytes[start..start + 3];
        let boundary_before = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        let boundary_after = bytes
            .get(start + 3)
            .is_none_or(|b| !b.is_ascii_alphanumeric());
        if !(digits.iter().all(u8::is_ascii_digit) && boundary_before && boundary_after) {
            return None;
        }
        let code: u16 = std::str::from_utf8(digits).ok()?.parse().ok()?;
        let context = &message[..start].to_ascii_lowercase();
        let looks_http = matches!(code, 400 | 401 | 403 | 404 | 413 | 422 | 429 | 500..=504)
            && (context.ends_with("status ")
                || context.ends_with("error: ")
                || context.ends_with('(')
                || context.ends_with("\"code\":")
                || context.ends_with("code ")
                || context.ends_with("api error: "));
        looks_http.then_some(code)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clis::{BUILTINS, CLAUDE, CODEX, COPILOT, GEMINI, QWEN};

    #[test]
    fn classify_reads_http_status_in_each_clis_wording() {
        let cases = [
            (
                CODEX,
                "unexpected status 401 Unauthorized: bad key, url: http://x/v1/responses",
                ErrorKind::Authentication,
            ),
            (
                CLAUDE,
                "API Error: Request rejected (429) · slow down",
                ErrorKind::RateLimited,
            ),
            (
                GEMINI,
                "[API Error: {\"error\":{\"code\":500,\"status\":\"INTERNAL\"}}]",
                ErrorKind::ServerError,
            ),
            (CLAUDE, "API Error: 400 bad model", ErrorKind::BadRequest),
            (
                CODEX,
                "exceeded retry limit, last status: 429 Too Many Requests",
                ErrorKind::RateLimited,
            ),
        ];
        for (agent, message, kind) in cases {
            assert_eq!(
                ErrorKind::classify(agent.cli(), None, message),
                kind,
                "{agent}: {message}"
            );
        }
    }

    #[test]
    fn classify_reads_failures_without_a_status() {
        let cases = [
            (
                CODEX,
                "Connection failed: error sending request",
                ErrorKind::Connection,
            ),
            (
                CLAUDE,
                "API Error: Unable to connect to API (ConnectionRefused)",
                ErrorKind::Connection,
            ),
            (
                CODEX,
                "stream disconnected before completion: stream closed before response.completed",
                ErrorKind::StreamCut,
            ),
            (
                CLAUDE,
                "No conversation found with session ID: abc",
                ErrorKind::SessionNotFound,
            ),
            (
                CODEX,
                "We’re currently experiencing high demand, which may cause temporary errors.",
                ErrorKind::ServerError,
            ),
            // qwen
            (
                QWEN,
                "No saved session found with ID fb4f. Run `qwen --resume` without an ID",
                ErrorKind::SessionNotFound,
            ),
            (
                QWEN,
                "[API Error: Connection error. (cause: connect ECONNREFUSED 127.0.0.1:41389)]",
                ErrorKind::Connection,
            ),
            // copilot
            (
                COPILOT,
                "Error: No session, task, or name matched '0000'.",
                ErrorKind::SessionNotFound,
            ),
            (
                COPILOT,
                "Last error: Failed to finalize chat-completions stream: missing finish_reason",
                ErrorKind::StreamCut,
            ),
            (
                COPILOT,
                "Could not connect to local model provider at http://127.0.0.1:40077/v1.",
                ErrorKind::Connection,
            ),
            (CODEX, "something odd", ErrorKind::AgentError),
        ];
        for (agent, message, kind) in cases {
            assert_eq!(
                ErrorKind::classify(agent.cli(), None, message),
                kind,
                "{agent}: {message}"
            );
        }
    }

    #[test]
    fn explicit_status_wins_over_wording() {
        assert_eq!(
            ErrorKind::classify(CODEX.cli(), Some(401), "whatever"),
            ErrorKind::Authentication
        );
    }

    #[test]
    fn a_clis_own_wording_is_read_only_for_that_cli() {
        let message = "No saved session found with ID fb4f. Run `qwen --resume` without an ID";
        assert_eq!(
            ErrorKind::classify(QWEN.cli(), None, message),
            ErrorKind::SessionNotFound
        );
        assert_eq!(
            ErrorKind::classify(CODEX.cli(), None, message),
            ErrorKind::AgentError
        );
    }

    #[test]
    fn every_kind_a_cli_words_is_tried() {
        for cli in BUILTINS {
            for (kind, words) in cli.error_wording() {
                assert!(
                    WORDING.iter().any(|(tried, _)| tried == kind),
                    "{}: {kind:?}",
                    cli.name()
                );
                assert!(
                    words.iter().all(|word| *word == word.to_ascii_lowercase()),
                    "{}: {words:?}",
                    cli.name()
                );
            }
        }
    }
}
