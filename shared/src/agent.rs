//! An agent a caller can run: a CLI module under a name, with the settings it runs with.
//!
//! A built-in agent is a built-in CLI under its own name. A custom agent (from the config
//! file) reuses a built-in CLI's module under another name, with its own extra arguments,
//! environment and defaults.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Serialize, Serializer};

use crate::cli::{Cli, ModelListing};
use crate::command_line::CommandLine;
use crate::environment::EnvPattern;
use crate::error::SetupError;
use crate::outcome::ErrorKind;
use crate::request::{Effort, Isolation, Permission, RunRequest};

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
    /// The reasoning effort when a request names none.
    pub effort: Option<Effort>,
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
    effort: None,
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

    /// Its name: its tool's, and how calls and the config file name it.
    pub fn name(&self) -> &'static str {
        self.name.unwrap_or_else(|| self.cli.name())
    }

    /// The CLI module that runs it.
    pub fn cli(&self) -> &'static dyn Cli {
        self.cli
    }

    /// What it adds to every run of its CLI.
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

    /// The command line that runs `request` with this agent's CLI at `program`: the CLI's
    /// own command line, the agent's extra arguments and variables, and the environment it
    /// inherits: the base set, the CLI's own variables and `passed` (`CAM_PASS_ENV`).
    pub fn command_line(
        &self,
        request: &RunRequest,
        program: &Path,
        passed: &[EnvPattern],
    ) -> Result<CommandLine, SetupError> {
        self.check_session(request)?;
        let mut cmd = self.cli.command_line(request, program)?;
        if let Some(effort) = request.effort {
            let words = self
                .cli
                .effort_option(effort)
                .map_err(|reason| self.unsupported("effort", reason))?;
            cmd.insert_options(&words);
        }
        if let (Some(endpoint), Some(hook)) = (&request.questions, self.cli.question_hook())
            && request.permission < Permission::Unlimited
        {
            hook(endpoint, &mut cmd);
        }
        cmd.insert_options(&self.profile.args);
        self.add_environment(&mut cmd, passed);
        Ok(cmd)
    }

    /// The command line that lists the models its CLI at `program` offers, in the environment
    /// a run of it gets, with the listing that reads what it prints; `None` when the CLI
    /// cannot list them.
    pub fn models_command(
        &self,
        program: &Path,
        passed: &[EnvPattern],
    ) -> Option<(CommandLine, ModelListing)> {
        let listing = self.cli.model_listing()?;
        let mut cmd = CommandLine::new(program);
        cmd.args
            .extend(listing.args.iter().map(|arg| (*arg).to_owned()));
        self.add_environment(&mut cmd, passed);
        Some((cmd, listing))
    }

    /// The agent's variables, then what the CLI inherits (see [`Agent::command_line`]).
    fn add_environment(&self, cmd: &mut CommandLine, passed: &[EnvPattern]) {
        for (name, value) in &self.profile.env {
            if cmd.env.iter().all(|(set, _)| set != name.as_str()) {
                cmd.set_env(name, value);
            }
        }
        cmd.inherit(std::env::vars_os(), self.cli.own_env(), passed);
    }

    /// A fork needs the session it branches and a CLI that can branch one; a session is
    /// resumed only by a CLI that can.
    fn check_session(&self, request: &RunRequest) -> Result<(), SetupError> {
        let (argument, check) = match (request.fork, &request.session_id) {
            (true, None) => return Err(SetupError::ForkWithoutSession),
            (true, Some(_)) => ("fork", self.cli.forks()),
            (false, Some(_)) => ("session_id", self.cli.resumes()),
            (false, None) => return Ok(()),
        };
        check.map_err(|reason| self.unsupported(argument, reason))
    }

    fn unsupported(&self, argument: &'static str, reason: &'static str) -> SetupError {
        SetupError::Unsupported {
            agent: self.name(),
            argument,
            reason,
        }
    }

    /// `CAM_<NAME>_<SETTING>`: the variable that sets `setting` for this agent.
    pub fn env_var(&self, setting: &str) -> String {
        env_var(self.name(), setting)
    }
}

impl Agent {
    /// What the user can do about a failure of `kind` of this agent's.
    pub fn hint(self, kind: ErrorKind) -> Option<String> {
        let agent = self;
        // A custom agent's name is no command: the CLI it runs is.
        let cli = self.cli().binary();
        let hint = match kind {
            ErrorKind::Authentication => format!(
                "check the API key in the server's environment (or the agent's `env`), or log in to {agent} (run `{cli}` once by hand)"
            ),
            ErrorKind::RateLimited => "the provider is rate-limiting this account: wait and retry, or check its quota".to_owned(),
            ErrorKind::ServerError => "the model provider had a server error: retry in a moment".to_owned(),
            ErrorKind::BadRequest => "the provider rejected the request: check the model name and the prompt".to_owned(),
            ErrorKind::Connection => format!(
                "{agent} could not reach its model provider: check the network, proxy and base URL in {agent}'s configuration"
            ),
            ErrorKind::StreamCut => "the provider's stream ended early: retry".to_owned(),
            ErrorKind::SessionNotFound if self.cli().resumes_only_from_origin() => format!(
                "check the session id, and resume from the workspace the session was started in: {agent} resumes only there"
            ),
            ErrorKind::SessionNotFound => "check the session id".to_owned(),
            ErrorKind::AgentError => return None,
            ErrorKind::Crashed => format!("{agent} exited without finishing its turn: its stderr_tail says why"),
            ErrorKind::OutputTooLarge => "raise the line cap (--max-line-bytes or CAM_MAX_LINE_BYTES) or ask for a shorter answer".to_owned(),
            ErrorKind::Cancelled | ErrorKind::Refused => return None,
            ErrorKind::TotalTimeout => "raise the timeout (timeout_secs, --timeout-secs or CAM_TIMEOUT_SECS) or split the task".to_owned(),
            ErrorKind::IdleTimeout => format!(
                "{agent} produced no event for the idle limit: it may be stuck retrying or waiting on a prompt no one can answer; raise --idle-timeout-secs (CAM_IDLE_TIMEOUT_SECS) for long silent tools"
            ),
            ErrorKind::InvalidOutput => format!(
                "the answer did not follow output_schema: resume the session (session_id) asking {agent} to answer again with JSON that conforms, or make the schema or the prompt clearer"
            ),
        };
        Some(hint)
    }
}

/// A name that is none of the agents on offer.
#[derive(Debug, thiserror::Error)]
#[error("unknown agent `{name}`: expected one of {known}")]
pub struct UnknownAgent {
    /// The name asked for.
    pub name: String,
    /// The names on offer, for the message.
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
