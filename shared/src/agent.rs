//! An agent a caller can run: a CLI module under a name, with the settings it runs with.
//!
//! A built-in agent is a built-in CLI under its own name. A custom agent (from the config
//! file) reuses a built-in CLI's module under another name, with its own extra arguments,
//! environment and defaults.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use crate::isolation::Isolation;

use schemars::JsonSchema;
use serde::{Serialize, Serializer};

use crate::cli::Cli;

/// A cheap handle to an agent. Two agents are equal when their names are.
#[derive(Clone, Copy)]
pub struct Agent {
    /// `None` for a built-in agent, which goes by its CLI's name.
    name: Option<&'static str>,
    cli: &'static dyn Cli,
    profile: &'static Profile,
}

/// What an agent adds to every run of its CLI.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// Appended to the CLI's command line (checked against [`Cli::reserved_flags`]).
    pub args: Vec<String>,
    /// Set in the CLI's environment, over inherited values.
    pub env: Vec<(String, String)>,
    /// The model when a request names none.
    pub model: Option<String>,
    /// The total timeout when a request gives none.
    pub timeout: Option<Duration>,
    /// The idle timeout, instead of the engine's.
    pub idle_timeout: Option<Duration>,
    /// Where a run works when the call does not say.
    pub isolation: Option<Isolation>,
    /// Directories it may also write under the sandbox at `workspace-write`.
    pub writable: Vec<std::path::PathBuf>,
}

static NO_PROFILE: Profile = Profile {
    args: Vec::new(),
    env: Vec::new(),
    model: None,
    timeout: None,
    idle_timeout: None,
    isolation: None,
    writable: Vec::new(),
};

impl Agent {
    /// `cli` under its own name, with nothing added.
    pub const fn builtin(cli: &'static dyn Cli) -> Self {
        Self {
            name: None,
            cli,
            profile: &NO_PROFILE,
        }
    }

    /// An agent named `name` that runs `cli` with `profile`. Agents are made once, when the
    /// server starts, so they are leaked to keep the handle `Copy`.
    pub fn new(name: &str, cli: &'static dyn Cli, profile: Profile) -> Self {
        let name = (name != cli.name()).then(|| &*Box::leak(name.to_owned().into_boxed_str()));
        let profile = if profile == NO_PROFILE {
            &NO_PROFILE
        } else {
            Box::leak(Box::new(profile))
        };
        Self { name, cli, profile }
    }

    pub fn name(&self) -> &'static str {
        self.name.unwrap_or_else(|| self.cli.name())
    }

    /// The CLI module that runs it.
    pub fn cli(&self) -> &'static dyn Cli {
        self.cli
    }

    pub fn profile(&self) -> &'static Profile {
        self.profile
    }

    /// Whether it is a built-in CLI under its own name (rather than a custom agent).
    pub fn is_builtin(&self) -> bool {
        self.name.is_none()
    }

    /// Where its binary is set, for messages.
    pub fn bin_setting(&self) -> String {
        let name = self.name();
        if self.is_builtin() {
            format!(
                "{} (or --{name}-bin, or `bin` under [agents.{name}] in the config file)",
                self.env_var("BIN")
            )
        } else {
            format!("`bin` under [agents.{name}] in the config file")
        }
    }

    /// `CAM_<NAME>_<SETTING>`: the variable that sets `setting` for this agent.
    pub fn env_var(&self, setting: &str) -> String {
        env_var(self.name(), setting)
    }
}

/// A name that is none of the agents on offer.
#[derive(Debug, thiserror::Error)]
#[error("unknown agent `{name}`: expected one of {known}")]
pub struct UnknownAgent {
    pub name: String,
    pub known: String,
}

/// The agent of `agents` called `name`.
pub fn find(agents: &[Agent], name: &str) -> Result<Agent, UnknownAgent> {
    agents
        .iter()
        .copied()
        .find(|agent| agent.name() == name)
        .ok_or_else(|| UnknownAgent {
            name: name.to_owned(),
            known: names(agents),
        })
}

/// `codex, claude, …`: the names of `agents`, for messages.
pub fn names(agents: &[Agent]) -> String {
    let names: Vec<_> = agents.iter().map(Agent::name).collect();
    names.join(", ")
}

/// `CAM_<NAME>_<SETTING>`, with `-` in the name written as `_`.
pub fn env_var(name: &str, setting: &str) -> String {
    format!(
        "CAM_{}_{setting}",
        name.to_ascii_uppercase().replace('-', "_")
    )
}

impl PartialEq for Agent {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Agent {}

impl Hash for Agent {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_builtin() {
            write!(f, "Agent({})", self.name())
        } else {
            write!(f, "Agent({} on {})", self.name(), self.cli.name())
        }
    }
}

impl Serialize for Agent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl JsonSchema for Agent {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Agent".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "The agent's name: its tool's name."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clis::CODEX;

    #[test]
    fn a_custom_agent_keeps_its_name_and_its_base_cli() {
        let profile = Profile {
            model: Some("gpt-5.5".into()),
            ..Profile::default()
        };
        let agent = Agent::new("codex-work", CODEX.cli(), profile);
        assert_eq!(agent.name(), "codex-work");
        assert_eq!(agent.cli().name(), "codex");
        assert_ne!(agent, CODEX);
        assert_eq!(agent.env_var("MAX_RUNS"), "CAM_CODEX_WORK_MAX_RUNS");
        assert_eq!(Agent::new("codex", CODEX.cli(), Profile::default()), CODEX);
    }
}
