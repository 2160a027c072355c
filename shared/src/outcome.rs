//! The typed result of one run, the same for every CLI, so a caller reads one shape
//! whichever CLI ran: status, answer, session, usage, tool summary, and an error whose kind
//! and hint say what to do.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::event::Usage;
use crate::isolation::TreeOutcome;
use crate::redact::redact_in_place;

/// Everything a caller learns from one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    /// The agent's name.
    pub agent: String,
    /// How the run ended.
    pub status: Status,
    /// The agent's final answer (markdown); empty when it gave none.
    pub answer: String,
    /// Pass this back as `session_id` to continue the conversation.
    pub session_id: Option<String>,
    /// The agent's reasoning, where the CLI reports it.
    pub reasoning: Option<String>,
    /// The tool calls the agent made.
    pub tools: ToolSummary,
    /// The tokens the run used, where the CLI reports them.
    pub usage: Option<Usage>,
    /// The CLI's exit code; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended the CLI, if one did.
    pub exit_signal: Option<i32>,
    /// How long the run took, in milliseconds.
    pub duration_ms: u64,
    /// The last lines the CLI wrote to stderr.
    pub stderr_tail: String,
    /// Things that went wrong without failing the run (unreadable lines, retries, …).
    pub warnings: Vec<String>,
    /// Why the run did not complete; `None` when it did.
    pub error: Option<ErrorInfo>,
    /// What the run changed and where it worked: runs that may write, and isolated runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<TreeOutcome>,
    /// The caller's check command, run in the run's tree after the agent ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<CommandOutcome>,
    /// The answer parsed as JSON, when the run was asked for an `output_schema` and the
    /// answer conforms to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The agent finished its turn.
    Completed,
    /// The agent, its CLI or the run's setup failed.
    Failed,
    /// The caller (or a shutdown) cancelled it.
    Cancelled,
    /// It ran past its total or idle time limit.
    TimedOut,
}

impl Status {
    /// Its name, as serialized: `completed`, `failed`, `cancelled`, `timed_out`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::TimedOut => "timed_out",
        }
    }
}

impl Outcome {
    /// The outcome of a run whose CLI never started (stopped in a queue, failed to spawn).
    pub fn not_run(agent: &str, status: Status, error: ErrorInfo) -> Self {
        Self {
            agent: agent.to_owned(),
            status,
            answer: String::new(),
            session_id: None,
            reasoning: None,
            tools: ToolSummary::default(),
            usage: None,
            exit_code: None,
            exit_signal: None,
            duration_ms: 0,
            stderr_tail: String::new(),
            warnings: Vec::new(),
            error: Some(error),
            tree: None,
            check: None,
            output: None,
        }
    }

    /// Mask API keys and tokens in what reports on the run (the answer and reasoning are the
    /// agent's work and stay as they are): see [`crate::redact`].
    pub fn redact_secrets(&mut self) {
        redact_in_place(&mut self.stderr_tail);
        self.warnings.iter_mut().for_each(redact_in_place);
        if let Some(error) = &mut self.error {
            redact_in_place(&mut error.message);
            error.hint.iter_mut().for_each(redact_in_place);
        }
        for call in &mut self.tools.recent {
            call.command.iter_mut().for_each(redact_in_place);
        }
    }
}

/// The tool calls of a run: how many, and the latest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSummary {
    /// Tool calls started.
    pub calls: u32,
    /// Tool calls that finished unsuccessfully.
    pub failed: u32,
    /// The most recent finished calls, oldest first.
    pub recent: Vec<ToolCall>,
}

/// One finished tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    /// The tool's name, as the CLI calls it (`shell`, `edit`, `Bash`…).
    pub name: String,
    /// The shell command it ran, for a tool that runs one.
    pub command: Option<String>,
    /// The command's exit code, where the CLI reports it.
    pub exit_code: Option<i64>,
    /// Whether the CLI reported it successful.
    pub success: bool,
}

/// Why a run did not complete, and what to do about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorInfo {
    /// What kind of failure it is.
    pub kind: ErrorKind,
    /// What happened, in the CLI's words where it gave some.
    pub message: String,
    /// What to do about it, where there is something to do.
    pub hint: Option<String>,
}

/// The kinds of failure a caller can act on alike, whichever CLI reported them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The model provider refused the credentials (HTTP 401 or 403).
    Authentication,
    /// The provider's rate limit or quota was hit (HTTP 429).
    RateLimited,
    /// The provider failed (HTTP 5xx).
    ServerError,
    /// The provider refused the request (HTTP 400, 404, 413, 422).
    BadRequest,
    /// The provider could not be reached.
    Connection,
    /// The provider's stream ended before the answer did.
    StreamCut,
    /// The session to resume does not exist.
    SessionNotFound,
    /// Any other failure the CLI reported.
    AgentError,
    /// The CLI exited without finishing its turn.
    Crashed,
    /// The CLI printed a line longer than the engine accepts.
    OutputTooLarge,
    /// The run was cancelled.
    Cancelled,
    /// The run passed its total time limit.
    TotalTimeout,
    /// The run printed nothing for longer than its idle limit.
    IdleTimeout,
    /// The answer is not JSON that conforms to the run's `output_schema`.
    InvalidOutput,
    /// The call went past the server's bounds and the person did not let it: it never ran.
    Refused,
}

/// What a command of the caller's did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandOutcome {
    /// The command, as given to the shell (`sh -c`, or on Windows as a batch file's lines).
    pub command: String,
    /// Exit code 0.
    pub passed: bool,
    /// `None` when a signal ended it, or it never started.
    pub exit_code: Option<i32>,
    /// Stopped at its time limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// Stopped because the run was cancelled.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
    /// The last lines of its output (stdout and stderr together).
    pub output_tail: String,
}

impl CommandOutcome {
    /// How it ended, in words: "exit 1", "timed out", "cancelled", "killed by a signal".
    pub fn describe_end(&self) -> String {
        match self.exit_code {
            _ if self.timed_out => "timed out".to_owned(),
            _ if self.cancelled => "cancelled".to_owned(),
            Some(code) => format!("exit {code}"),
            None => "ended by a signal".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_since_subtracts_an_earlier_cumulative_report() {
        let earlier = Usage {
            input_tokens: 100,
            cached_input_tokens: 20,
            output_tokens: 7,
            reasoning_tokens: Some(3),
            cost_usd: None,
        };
        let now = Usage {
            input_tokens: 300,
            cached_input_tokens: 60,
            output_tokens: 21,
            reasoning_tokens: Some(9),
            cost_usd: None,
        };
        let run = now.since(&earlier);
        assert_eq!(
            (
                run.input_tokens,
                run.cached_input_tokens,
                run.output_tokens,
                run.reasoning_tokens
            ),
            (200, 40, 14, Some(6))
        );
    }
}
