//! The one typed event stream every CLI dialect is parsed into.

use serde::Serialize;

use crate::outcome::Usage;

/// Something the agent did, as parsed from one line of its JSONL output.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The CLI named the session a later run can resume.
    SessionStarted {
        session_id: String,
        model: Option<String>,
    },
    /// Assistant text: a whole message, or a streaming piece of the current one.
    Text { text: String, delta: bool },
    /// Reasoning ("thinking") text.
    Reasoning { text: String },
    ToolStarted {
        id: Option<String>,
        name: String,
        command: Option<String>,
    },
    ToolFinished {
        id: Option<String>,
        name: String,
        command: Option<String>,
        exit_code: Option<i64>,
        success: bool,
    },
    /// Token usage of this run so far (already normalised: the latest report wins).
    Usage(Usage),
    /// A non-fatal message: a retry, a warning, an error the CLI recovers from.
    Notice { level: NoticeLevel, message: String },
    /// The turn ended well. `answer`, when given, is the CLI's own final answer.
    TurnCompleted { answer: Option<String> },
    /// The turn ended in an error the CLI reported.
    TurnFailed {
        message: String,
        http_status: Option<u16>,
    },
    /// The CLI stopped the turn itself, e.g. after an interrupt: cancelled when the
    /// engine asked for it, failed otherwise.
    TurnAborted { message: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Retry,
    Warning,
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
        self.describe_into(&mut line).then_some(line)
    }

    /// [`AgentEvent::describe`] into `line`, reusing its allocation: replaces its content and
    /// returns true, or returns false and leaves it as it was when the event has no line.
    pub fn describe_into(&self, line: &mut String) -> bool {
        if matches!(self, Self::Text { delta: true, .. } | Self::Usage(_)) {
            return false;
        }
        line.clear();
        // Pieces pushed one by one: called for every event, and `write!` costs more.
        let parts: [&str; 3] = match self {
            Self::SessionStarted { session_id, .. } => ["session ", session_id, ""],
            Self::Text { delta: true, .. } | Self::Usage(_) => ["", "", ""],
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
                    (false, Some(code)) => {
                        use std::fmt::Write;
                        let _ = write!(line, "`{what}` failed (exit {code})");
                        return true;
                    }
                    (false, None) => ["`", what, "` failed"],
                }
            }
            Self::Notice { message, .. } => ["", first_line(message), ""],
            Self::TurnCompleted { .. } => ["turn completed", "", ""],
            Self::TurnFailed { message, .. } => ["turn failed: ", first_line(message), ""],
            Self::TurnAborted { message } => ["turn aborted: ", first_line(message), ""],
        };
        for part in parts {
            line.push_str(part);
        }
        true
    }
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
