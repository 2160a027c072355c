//! One parser per CLI dialect, each turning a JSONL line into [`AgentEvent`]s.
//!
//! Parsers tolerate unknown event types and unknown fields (every CLI adds them between
//! versions): those come back as a [`LineIssue`] that the run counts in its warnings.

#[cfg(test)]
mod captures;
mod claude;
mod codex;
mod gemini;
mod json;
mod opencode;
mod scan;

pub use claude::ClaudeDialect;
pub use codex::CodexDialect;
pub use gemini::GeminiDialect;
pub use opencode::OpencodeDialect;

use crate::event::AgentEvent;
use crate::request::AgentKind;

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
    Malformed { event_type: String, reason: String },
}

/// A fresh parser for `agent`'s dialect.
pub fn for_agent(agent: AgentKind) -> Box<dyn Dialect> {
    match agent {
        AgentKind::Codex => Box::<CodexDialect>::default(),
        AgentKind::Claude => Box::<ClaudeDialect>::default(),
        AgentKind::Gemini => Box::<GeminiDialect>::default(),
        AgentKind::Opencode => Box::<OpencodeDialect>::default(),
    }
}
