//! What a caller asks for: one headless run of one agent CLI, in terms common to all of them
//! (prompt, workspace, permission level, session), which each CLI's module maps onto its own
//! flags.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;

use crate::output_schema::OutputSchema;
use crate::question::PersonWait;
use serde::{Deserialize, Serialize};

/// How much the agent may do to the machine. Each level maps to the CLI's own mechanism;
/// a level a CLI cannot give is refused, never silently raised. Ordered by what they allow.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Permission {
    /// Read files and run read-only commands; never write.
    #[default]
    ReadOnly,
    /// Edit files inside the workspace and run commands there.
    WorkspaceWrite,
    /// No restrictions: any command, any file.
    Unlimited,
}

impl Permission {
    /// Its name, as the tools and the command line spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::Unlimited => "unlimited",
        }
    }
}

impl std::fmt::Display for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Permission {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::ReadOnly, Self::WorkspaceWrite, Self::Unlimited]
            .into_iter()
            .find(|level| level.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown permission `{s}`: expected read-only, workspace-write or unlimited"
                )
            })
    }
}

/// How hard the model thinks: one word set, which each CLI spells its own way (see
/// [`crate::cli::Cli::effort_option`]). No `minimal`: claude has no such level, and not every
/// codex model takes it; `max` is the highest level claude, codex and copilot share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// Fast and cheap.
    Low,
    /// The usual.
    Medium,
    /// Harder problems.
    High,
    /// The most thinking the CLI offers by that name.
    Max,
}

impl Effort {
    /// Its name, as the tools and the command line spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Max => "max",
        }
    }

    /// Its name for a CLI whose strongest level is `xhigh` (pi, cline): `max` is that one.
    pub fn name_up_to_xhigh(self) -> &'static str {
        match self {
            Self::Max => "xhigh",
            other => other.name(),
        }
    }
}

impl std::fmt::Display for Effort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Effort {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::Low, Self::Medium, Self::High, Self::Max]
            .into_iter()
            .find(|effort| effort.name() == s)
            .ok_or_else(|| format!("unknown effort `{s}`: expected low, medium, high or max"))
    }
}

/// Where the agent works.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// In the caller's workspace itself.
    #[default]
    None,
    /// In a new git worktree of the workspace's repository, on a branch of its own.
    Worktree,
}

impl Isolation {
    /// Its name, as the tools and the command line spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Worktree => "worktree",
        }
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Isolation {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::None, Self::Worktree]
            .into_iter()
            .find(|isolation| isolation.name() == s)
            .ok_or_else(|| format!("unknown isolation `{s}`: expected none or worktree"))
    }
}

/// What an isolated run's worktree starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Base {
    /// The caller's working state: HEAD plus uncommitted and untracked (not ignored) work.
    #[default]
    WorkingState,
    /// The HEAD commit alone.
    Head,
}

/// One run, whichever agent runs it (the engine takes the agent beside the request).
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// What the agent is to do: written to the CLI's stdin, never an argument.
    pub prompt: String,
    /// The CLI's working directory; must be an existing directory.
    pub workspace: PathBuf,
    /// How much the agent may do.
    pub permission: Permission,
    /// The model, instead of the CLI's (or the agent's) default.
    pub model: Option<String>,
    /// Resume this session of the CLI instead of starting a new one.
    pub session_id: Option<String>,
    /// Resume `session_id` as a new session of its own (a fork), leaving that one as it was.
    pub fork: bool,
    /// The model's reasoning effort, instead of the CLI's default.
    pub effort: Option<Effort>,
    /// Overrides the engine's default total timeout.
    pub timeout: Option<Duration>,
    /// Extra instructions appended to the agent's system prompt (claude only).
    pub append_system_prompt: Option<String>,
    /// Where the agent works: the workspace itself, or a worktree of its own.
    pub isolation: Isolation,
    /// What an isolated run's worktree starts from.
    pub base: Base,
    /// Run in an isolated run's new worktree before the agent starts (installing dependencies).
    pub setup: Option<String>,
    /// Run in the run's tree after the agent ends (tests, lint): its result is in the outcome.
    pub check: Option<String>,
    /// A JSON Schema the final answer must follow; the parsed answer is the outcome's `output`.
    pub output_schema: Option<OutputSchema>,
    /// Where a CLI with a hook for its permission questions (see
    /// [`crate::cli::Cli::question_hook`]) sends them; the caller serves it for the run.
    pub questions: Option<QuestionEndpoint>,
    /// Held by whoever puts the run's questions to the person: while one waits, the CLI's
    /// silence does not count against the idle limit.
    pub person_wait: PersonWait,
}

/// A run's private MCP endpoint for its permission questions: a Streamable HTTP URL, the
/// bearer token it takes and the tool that answers. Its `Debug` never shows the token.
#[derive(Clone, PartialEq, Eq)]
pub struct QuestionEndpoint {
    /// The endpoint's URL.
    pub url: String,
    /// The bearer token it takes.
    pub token: String,
    /// The endpoint's one tool, which takes `{tool_name, input}`.
    pub tool: String,
}

impl std::fmt::Debug for QuestionEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuestionEndpoint")
            .field("url", &self.url)
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl RunRequest {
    /// A request of `prompt` in `workspace`, everything else by default: read-only, in place.
    pub fn new(prompt: impl Into<String>, workspace: impl Into<PathBuf>) -> Self {
        Self {
            prompt: prompt.into(),
            workspace: workspace.into(),
            permission: Permission::default(),
            model: None,
            session_id: None,
            fork: false,
            effort: None,
            timeout: None,
            append_system_prompt: None,
            isolation: Isolation::None,
            base: Base::WorkingState,
            setup: None,
            check: None,
            output_schema: None,
            questions: None,
            person_wait: PersonWait::default(),
        }
    }
}

/// A request whose prompt looks like a flag, which must never reach a command line.
#[cfg(test)]
pub(crate) fn flag_prompt_request() -> RunRequest {
    RunRequest::new("--dangerously-bypass-approvals-and-sandbox", "/tmp")
}
