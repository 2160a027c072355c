//! What the store keeps of a job, as typed rows.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use cli_agent_engine::{Agent, ErrorInfo, Permission, Status, Usage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::id::JobId;
use super::trees::TreeState;
use cli_agent_engine::Isolation;

/// Where a job is in its life. `queued`, `running` and `needs_input` are the unfinished states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Queued,
    Running,
    /// Running, and waiting for the person to answer a question on the dashboard.
    NeedsInput,
    Completed,
    Failed,
    Cancelled,
    TimedOut,
    /// Its server ended (or was killed) before the run did.
    Interrupted,
}

impl JobStatus {
    pub const ALL: [JobStatus; 8] = [
        Self::Queued,
        Self::Running,
        Self::NeedsInput,
        Self::Completed,
        Self::Failed,
        Self::Cancelled,
        Self::TimedOut,
        Self::Interrupted,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::NeedsInput => "needs_input",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::TimedOut => "timed_out",
            Self::Interrupted => "interrupted",
        }
    }

    pub fn is_finished(self) -> bool {
        !matches!(self, Self::Queued | Self::Running | Self::NeedsInput)
    }

    /// The job status a run's outcome gives.
    pub fn of(status: Status) -> Self {
        match status {
            Status::Completed => Self::Completed,
            Status::Failed => Self::Failed,
            Status::Cancelled => Self::Cancelled,
            Status::TimedOut => Self::TimedOut,
        }
    }
}

impl std::fmt::Display for JobStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for JobStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|status| status.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown job status `{s}`: expected one of queued, running, needs_input, \
                     completed, failed, cancelled, timed_out, interrupted"
                )
            })
    }
}

/// How the job was started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A blocking tool call.
    Call,
    /// A tool call with `background: true`.
    Background,
    /// `cli-agent-mcp run` from a shell.
    Command,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Self::Call => "call",
            Self::Background => "background",
            Self::Command => "command",
        }
    }
}

impl FromStr for Origin {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::Call, Self::Background, Self::Command]
            .into_iter()
            .find(|origin| origin.name() == s)
            .ok_or_else(|| format!("unknown job origin `{s}`"))
    }
}

/// The process that owns a job. A pid alone names another process once it comes round again,
/// so the owner is the pid together with the time it started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
pub struct Owner {
    pub pid: u32,
    /// When the process started, as the OS tells it (clock ticks since boot on Linux,
    /// microseconds since the epoch on macOS): only ever compared with itself.
    pub start_ticks: u64,
}

impl Owner {
    pub fn this_process() -> Self {
        let pid = std::process::id();
        Self {
            pid,
            // Our own start is always there to read; 0 only if the OS would not say.
            start_ticks: start_ticks(pid).unwrap_or(0),
        }
    }

    /// The live process `pid`, if there is one.
    #[cfg(test)]
    pub fn of(pid: u32) -> Option<Self> {
        Some(Self {
            pid,
            start_ticks: start_ticks(pid)?,
        })
    }

    /// Whether this very process still exists (not another one that got its pid).
    pub fn is_alive(&self) -> bool {
        start_ticks(self.pid) == Some(self.start_ticks)
    }
}

fn start_ticks(pid: u32) -> Option<u64> {
    cli_agent_engine::platform::process_start(pid)
}

/// A job as first recorded.
#[derive(Clone, Debug)]
pub struct NewJob<'a> {
    pub id: &'a JobId,
    pub agent: Agent,
    pub origin: Origin,
    pub workspace: &'a Path,
    pub permission: Permission,
    pub model: Option<&'a str>,
    /// The session the run resumes, if it does; replaced by the one the CLI announces.
    pub session_id: Option<&'a str>,
    pub prompt: &'a str,
    /// `queued` or `running`.
    pub status: JobStatus,
    /// The bounds the person let this job past when asked (an MCP call's), in their words.
    pub allowed_past: Option<&'a str>,
}

/// A job as the store knows it (the answer and the events are read in pages).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct JobRecord {
    pub id: JobId,
    /// The agent's name.
    pub agent: String,
    pub origin: Origin,
    pub status: JobStatus,
    pub workspace: PathBuf,
    pub permission: Permission,
    pub model: Option<String>,
    /// The prompt's first 200 characters.
    pub prompt_preview: String,
    /// Unix milliseconds.
    pub created_ms: u64,
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
    pub owner: Owner,
    /// The last progress line.
    pub progress: Option<String>,
    pub session_id: Option<String>,
    /// The answer's length in characters; 0 until the job finishes.
    pub answer_chars: u64,
    pub error: Option<ErrorInfo>,
    pub usage: Option<Usage>,
    pub transcript: TranscriptInfo,
    /// Where it worked and what it changed: runs that may write in git, and isolated runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<TreeSummary>,
    /// The bounds of the server the person let this job past when asked; absent when it
    /// stayed within them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_past: Option<String>,
    /// The question it waits on the person to answer on the dashboard (`needs_input`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<ParkedQuestion>,
}

/// A question a job waits on the person to answer on the dashboard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ParkedQuestion {
    /// Its number within the job, from 1: the dashboard answers it by this.
    pub number: u32,
    /// The question, as the person reads it.
    pub asked: String,
    /// Unix milliseconds.
    pub asked_ms: u64,
}

/// A job's tree in brief: `job_diff` and `jobs show` tell the rest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TreeSummary {
    pub isolation: Isolation,
    pub state: TreeState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<PathBuf>,
    /// Known once the run ended and was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_changed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_added: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_removed: Option<u64>,
}

/// What the store holds of a job's events, and what its size cap dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TranscriptInfo {
    /// Events kept.
    pub events: u64,
    /// Their size as JSON lines.
    pub bytes: u64,
    pub dropped_events: u64,
    pub dropped_bytes: u64,
}

/// Which jobs `list` returns: newest first, `limit` of them after skipping `offset`.
#[derive(Clone, Debug, PartialEq)]
pub struct ListFilter {
    pub status: Option<JobStatus>,
    /// An agent's name.
    pub agent: Option<String>,
    pub workspace: Option<PathBuf>,
    pub limit: usize,
    pub offset: usize,
}

impl Default for ListFilter {
    fn default() -> Self {
        Self {
            status: None,
            agent: None,
            workspace: None,
            limit: 50,
            offset: 0,
        }
    }
}

/// A page of a long text: `text` starts at `offset` of `total`; `next_offset` is where the
/// next page starts, `None` after the last.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TextPage {
    pub text: String,
    pub offset: u64,
    pub total: u64,
    pub next_offset: Option<u64>,
}

/// What asking for a job's cancel did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelRequest {
    /// The owning server will see the request and cancel the run.
    Requested { owner: Owner },
    /// The job had already ended, in this state.
    AlreadyFinished(JobStatus),
    /// Its server is gone: the job is now recorded `interrupted`.
    OwnerGone,
}
