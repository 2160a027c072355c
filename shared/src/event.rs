//! The one typed event stream every CLI dialect is parsed into, so the transcript, progress
//! and the job store handle any CLI alike.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::question::PersonQuestion;

/// Something the agent did, as parsed from one line of its JSONL output.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The CLI named the session a later run can resume.
    SessionStarted {
        /// The id to resume it by.
        session_id: String,
        /// The model, where the CLI names it.
        model: Option<String>,
    },
    /// Assistant text: a whole message, or a streaming piece of the current one.
    Text {
        /// The text.
        text: String,
        /// A piece of the current message, rather than a whole one.
        delta: bool,
    },
    /// Reasoning ("thinking") text.
    Reasoning {
        /// The text.
        text: String,
    },
    /// The agent started a tool call.
    ToolStarted {
        /// The call's id, where the CLI gives one: its finish names the same.
        id: Option<String>,
        /// The tool's name.
        name: String,
        /// The shell command it runs, for a tool that runs one.
        command: Option<String>,
    },
    /// A tool call finished.
    ToolFinished {
        /// The call's id, where the CLI gives one.
        id: Option<String>,
        /// The tool's name.
        name: String,
        /// The shell command it ran, for a tool that runs one.
        command: Option<String>,
        /// The command's exit code, where the CLI reports it.
        exit_code: Option<i64>,
        /// Whether the CLI reported it successful.
        success: bool,
    },
    /// Token usage of this run so far (already normalised: the latest report wins).
    Usage(Usage),
    /// A non-fatal message: a retry, a warning, an error the CLI recovers from.
    Notice {
        /// What kind of message.
        level: NoticeLevel,
        /// The message.
        message: String,
    },
    /// The turn ended well.
    TurnCompleted {
        /// The CLI's own final answer, when it gives one apart from its text.
        answer: Option<String>,
    },
    /// The turn ended in an error the CLI reported.
    TurnFailed {
        /// The error, in the CLI's words.
        message: String,
        /// The model provider's HTTP status, where the CLI reports it.
        http_status: Option<u16>,
    },
    /// The CLI stopped the turn itself, e.g. after an interrupt: cancelled when the
    /// engine asked for it, failed otherwise.
    TurnAborted {
        /// Why, in the CLI's words.
        message: String,
    },
    /// A question put to the person on the run's behalf, and its answer: never from a CLI's
    /// output, recorded by whoever asked.
    Question(PersonQuestion),
}

/// What kind of message a [`AgentEvent::Notice`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    /// The CLI retries a request.
    Retry,
    /// Something it works around.
    Warning,
    /// An error it recovers from, or reports before giving up.
    Error,
}

impl AgentEvent {
    /// Whether this event ends the turn: the CLI should exit soon after it.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            Self::TurnCompleted { .. } | Self::TurnFailed { .. } | Self::TurnAborted { .. }
        )
    }

    /// One short human line describing the event, for status lines and progress messages.
    pub fn describe(&self) -> Option<String> {
        let mut line = String::new();
        self.line_parts()?.write_into(&mut line);
        Some(line)
    }

    /// Whether [`AgentEvent::describe`] has a line for it.
    pub fn has_line(&self) -> bool {
        self.line_parts().is_some()
    }

    /// [`AgentEvent::describe`] into `line`, reusing its allocation; true if that changed
    /// `line` (an event with no line, or the same line again, leaves it as it was). Called for
    /// every event: most say what the one before said ("thinking").
    pub fn describe_into(&self, line: &mut String) -> bool {
        let Some(parts) = self.line_parts() else {
            return false;
        };
        if let LineParts::Pieces(pieces) = &parts
            && is_concat(line, pieces)
        {
            return false;
        }
        line.clear();
        parts.write_into(line);
        true
    }

    fn line_parts(&self) -> Option<LineParts<'_>> {
        Some(LineParts::Pieces(match self {
            Self::Text { delta: true, .. } | Self::Usage(_) => return None,
            Self::SessionStarted { session_id, .. } => ["session ", session_id, ""],
            Self::Text { text, .. } => ["says: ", first_line(text), ""],
            Self::Reasoning { .. } => ["thinking", "", ""],
            Self::ToolStarted { name, command, .. } => match command {
                Some(command) => ["running `", first_line(command), "`"],
                None => ["using ", name, ""],
            },
            Self::ToolFinished {
                name,
                command,
                exit_code,
                success,
                ..
            } => {
                let what = command.as_deref().map_or(name.as_str(), first_line);
                match (success, exit_code) {
                    (true, _) => ["finished `", what, "`"],
                    (false, Some(code)) => return Some(LineParts::FailedWith(what, *code)),
                    (false, None) => ["`", what, "` failed"],
                }
            }
            Self::Notice { message, .. } => ["", first_line(message), ""],
            Self::TurnCompleted { .. } => ["turn completed", "", ""],
            Self::TurnFailed { message, .. } => ["turn failed: ", first_line(message), ""],
            Self::TurnAborted { message } => ["turn aborted: ", first_line(message), ""],
            Self::Question(question) => ["asked the person: ", question.answer.name(), ""],
        }))
    }
}

/// An event's line: pieces pushed one by one (`write!` costs more), or a failed command.
enum LineParts<'a> {
    Pieces([&'a str; 3]),
    FailedWith(&'a str, i64),
}

impl LineParts<'_> {
    fn write_into(&self, line: &mut String) {
        match self {
            Self::Pieces(pieces) => pieces.iter().for_each(|piece| line.push_str(piece)),
            Self::FailedWith(what, code) => {
                use std::fmt::Write;
                let _ = write!(line, "`{what}` failed (exit {code})");
            }
        }
    }
}

/// Whether `line` is `pieces` joined. Compared byte by byte: the lines are short, and slice
/// comparisons (three calls of libc's memcmp) measured 100 ns per event, the bytes 8.
fn is_concat(line: &str, pieces: &[&str; 3]) -> bool {
    let joined = pieces.iter().flat_map(|piece| piece.bytes());
    line.len() == pieces.iter().map(|piece| piece.len()).sum::<usize>() && line.bytes().eq(joined)
}

/// The first line of `text`, cut to a length that fits a status line.
fn first_line(text: &str) -> &str {
    const MAX: usize = 120;
    let line = text.lines().next().unwrap_or("");
    if line.len() <= MAX {
        // No more characters than bytes.
        return line;
    }
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => &line[..cut],
        None => line,
    }
}

/// Token usage of one run, normalised across CLIs: `input_tokens` includes cached input,
/// `output_tokens` includes reasoning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// Input tokens read from the provider's cache.
    pub cached_input_tokens: u64,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Reasoning tokens, where the CLI reports them separately.
    pub reasoning_tokens: Option<u64>,
    /// Cost in US dollars, where the CLI reports it.
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// This run's share of a usage the CLI reports cumulatively (codex, per thread).
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(earlier.input_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_sub(earlier.cached_input_tokens),
            output_tokens: self.output_tokens.saturating_sub(earlier.output_tokens),
            reasoning_tokens: self
                .reasoning_tokens
                .map(|now| now.saturating_sub(earlier.reasoning_tokens.unwrap_or(0))),
            cost_usd: self.cost_usd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describing_into_a_line_reports_a_change_only_when_the_line_changes() {
        let thinking = AgentEvent::Reasoning { text: "a".into() };
        let failed = AgentEvent::ToolFinished {
            id: None,
            name: "shell".into(),
            command: Some("cargo test\nmore".into()),
            exit_code: Some(101),
            success: false,
        };
        let mut line = String::new();
        assert!(thinking.describe_into(&mut line));
        assert!(!thinking.describe_into(&mut line), "the same line again");
        assert!(!AgentEvent::Usage(Usage::default()).describe_into(&mut line));
        assert_eq!(line, "thinking");
        assert!(failed.describe_into(&mut line));
        assert_eq!(line, "`cargo test` failed (exit 101)");
        assert_eq!(failed.describe().as_deref(), Some(line.as_str()));
        assert_eq!(thinking.describe().as_deref(), Some("thinking"));
    }
}
