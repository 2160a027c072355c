//! Each CLI's real headless command line, built from a request.
//!
//! The prompt never becomes an argument: it is written to the CLI's stdin, which is then
//! closed, so no prompt can be read as a flag and none is limited by the argv size or shown
//! by `ps`. Every other user-supplied value goes in a `--flag=value` form for the same reason.

mod claude;
mod codex;
mod gemini;
mod opencode;

use std::ffi::OsString;
use std::path::Path;

use crate::environment::{self, EnvPattern};
use crate::error::SetupError;
use crate::request::{AgentKind, RunRequest};

/// A program, its arguments and its whole environment: the variables the engine sets, then
/// those it inherits (see [`crate::environment`]); nothing else reaches the CLI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandLine {
    pub program: OsString,
    pub args: Vec<String>,
    pub env: Vec<(OsString, OsString)>,
}

impl CommandLine {
    fn new(program: &Path) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    fn arg(&mut self, arg: impl Into<String>) -> &mut Self {
        self.args.push(arg.into());
        self
    }

    fn args<const N: usize>(&mut self, args: [&str; N]) -> &mut Self {
        self.args.extend(args.map(str::to_owned));
        self
    }

    /// `--name=value`: the value cannot be mistaken for a flag.
    fn flag_value(&mut self, name: &str, value: &str) -> &mut Self {
        self.arg(format!("{name}={value}"))
    }

    fn set_env(&mut self, name: &str, value: &str) -> &mut Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Add what the CLI inherits from `parent`: the base set, `own` and `passed`, except the
    /// variables the engine already set.
    fn inherit(
        &mut self,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
        own: &[&str],
        passed: &[EnvPattern],
    ) {
        let inherited = environment::inherited(parent, own, passed);
        let fresh: Vec<_> = inherited
            .into_iter()
            .filter(|(name, _)| self.env.iter().all(|(set, _)| set != name))
            .collect();
        self.env.extend(fresh);
    }
}

/// The command line that runs `request` with the CLI at `program`, with the environment it
/// inherits: the base set, its own variables and `passed` (`CAM_PASS_ENV`).
pub fn build(
    request: &RunRequest,
    program: &Path,
    passed: &[EnvPattern],
) -> Result<CommandLine, SetupError> {
    let mut cmd = match request.agent {
        AgentKind::Codex => codex::command(request, program),
        AgentKind::Claude => claude::command(request, program, is_root())?,
        AgentKind::Gemini => gemini::command(request, program),
        AgentKind::Opencode => opencode::command(request, program),
    };
    cmd.inherit(std::env::vars_os(), own_env(request.agent), passed);
    Ok(cmd)
}

/// The variables `agent` receives from the server's environment besides the base set.
fn own_env(agent: AgentKind) -> &'static [&'static str] {
    match agent {
        AgentKind::Codex => codex::OWN_ENV,
        AgentKind::Claude => claude::OWN_ENV,
        AgentKind::Gemini => gemini::OWN_ENV,
        AgentKind::Opencode => opencode::OWN_ENV,
    }
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

#[cfg(test)]
fn request(agent: AgentKind) -> RunRequest {
    RunRequest::new(agent, "--dangerously-bypass-approvals-and-sandbox", "/tmp")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variables_the_engine_sets_win_over_inherited_ones() {
        let parent = [
            ("OPENCODE_PERMISSION", r#"{"bash":"allow"}"#),
            ("OPENCODE_CONFIG", "/cfg.json"),
            ("PATH", "/bin"),
            ("GITHUB_TOKEN", "ghp_x"),
        ]
        .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        let mut cmd = opencode::command(&request(AgentKind::Opencode), Path::new("opencode"));
        cmd.inherit(parent, own_env(AgentKind::Opencode), &[]);
        let names: Vec<_> = cmd.env.iter().map(|(name, _)| name.clone()).collect();
        assert_eq!(
            names,
            ["OPENCODE_PERMISSION", "OPENCODE_CONFIG", "PATH"],
            "{:?}",
            cmd.env
        );
        assert!(cmd.env[0].1.to_string_lossy().contains("deny"));
    }
}
