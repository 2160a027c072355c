//! One parser per CLI dialect, each turning a JSONL line into [`AgentEvent`]s.
//!
//! Parsers tolerate unknown event types and unknown fields (every CLI adds them between
//! versions): those come back as a [`LineIssue`] that the run counts in its warnings.

#[cfg(test)]
mod captures;
pub(crate) mod json;

use crate::event::AgentEvent;

/// A stateful parser of one CLI's stdout, line by line.
pub trait Dialect: Send {
    /// Parse one line (without its newline) and push the events it carries onto `out`.
    fn parse_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) -> Result<(), LineIssue>;
}

/// Why a line gave no events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineIssue {
    /// Not a JSON object.
    NotJson,
    /// A JSON object whose `type` this parser does not know.
    UnknownType(String),
    /// A known type whose fields did not have the expected shape.
    Malformed {
        /// The line's `type`.
        event_type: String,
        /// What was wrong, in serde's words.
        reason: String,
    },
}
