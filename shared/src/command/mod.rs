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

use crate::error::SetupError;
use crate::request::{AgentKind, RunRequest};

/// A program, its arguments and the environment it gets on top of the server's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandLine {
    pub program: OsString,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
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
}

/// The command line that runs `request` with the CLI at `program`.
pub fn build(request: &RunRequest, program: &Path) -> Result<CommandLine, SetupError> {
    match request.agent {
        AgentKind::Codex => Ok(codex::command(request, program)),
        AgentKind::Claude => claude::command(request, program, is_root()),
        AgentKind::Gemini => Ok(gemini::command(request, program)),
        AgentKind::Opencode => Ok(opencode::command(request, program)),
    }
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

#[cfg(test)]
fn request(agent: AgentKind) -> RunRequest {
    RunRequest::new(agent, "--dangerously-bypass-approvals-and-sandbox", "/tmp")
}
