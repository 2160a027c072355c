//! What the server offers as tools, as plain data below the two that handle it: `config`
//! builds the offers from the config file and keeps custom agents off the job tools' names,
//! `mcp` turns them into MCP tools and serves them. An agent is offered with what its
//! configuration adds ([`Offer`]); the job tools are fixed ([`JobTool`]).

use cli_agent_engine::Agent;

/// An agent the server may offer as a tool, with what its configuration adds.
#[derive(Clone, Debug)]
pub struct Offer {
    pub agent: Agent,
    /// Shown first in its tool's description.
    pub note: Option<String>,
    /// Its cap on runs at once (`CAM_<AGENT>_MAX_RUNS` overrides it).
    pub max_runs: Option<usize>,
}

impl From<Agent> for Offer {
    fn from(agent: Agent) -> Self {
        Self {
            agent,
            note: None,
            max_runs: None,
        }
    }
}

/// The job tools, offered beside the agents' by every server; no agent may take their names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobTool {
    Wait,
    Result,
    Cancel,
    List,
    Diff,
    Apply,
    Discard,
    Revert,
}

impl JobTool {
    pub const ALL: [JobTool; 8] = [
        Self::Wait,
        Self::Result,
        Self::Cancel,
        Self::List,
        Self::Diff,
        Self::Apply,
        Self::Discard,
        Self::Revert,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Wait => "job_wait",
            Self::Result => "job_result",
            Self::Cancel => "job_cancel",
            Self::List => "job_list",
            Self::Diff => "job_diff",
            Self::Apply => "job_apply",
            Self::Discard => "job_discard",
            Self::Revert => "job_revert",
        }
    }

    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.name() == name)
    }
}
