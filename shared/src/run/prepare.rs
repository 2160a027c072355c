//! The first stage: a request checked and its command line built, nothing started, so that a
//! caller can refuse a bad request at once and start (or queue) a good one.

use crate::agent::Agent;
use crate::command_line::CommandLine;
use crate::config::EngineConfig;
use crate::error::SetupError;
use crate::locate::{FoundCli, Start, batch_file_refusal, find_cli};
use crate::request::{Isolation, Permission, RunRequest};
use crate::sandbox::{self, KernelSupport};

use super::files::RunFiles;
use super::sessions::{SessionRecord, Sessions};

/// A checked request with its command line, ready to be placed in its tree
/// ([`crate::Engine::place`]) and run.
#[derive(Debug)]
pub struct Prepared {
    pub(super) agent: Agent,
    /// The request, its workspace resolved and the agent's defaults filled in.
    pub(super) request: RunRequest,
    /// The CLI's binary and where it was found.
    pub(super) program: FoundCli,
    pub(super) command_line: CommandLine,
    /// What the ledger knows of the session the request resumes.
    pub(super) earlier: Option<SessionRecord>,
    pub(super) files: RunFiles,
}

impl Prepared {
    /// The agent that runs it.
    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// The request, its workspace resolved.
    pub fn request(&self) -> &RunRequest {
        &self.request
    }

    /// The CLI's command line, as it will start.
    pub fn command_line(&self) -> &CommandLine {
        &self.command_line
    }
}

/// Checks `request` for `agent` and builds its command line: the agent's defaults, the
/// workspace (which must be a directory), the repository's commands, the session it resumes,
/// the CLI's binary, the sandbox and the files the CLI reads or writes.
pub(crate) fn prepare(
    config: &EngineConfig,
    sessions: &Sessions,
    agent: Agent,
    mut request: RunRequest,
) -> Result<Prepared, SetupError> {
    if request.prompt.trim().is_empty() {
        return Err(SetupError::EmptyPrompt);
    }
    let profile = agent.profile();
    request.model = request.model.or_else(|| profile.model.clone());
    request.effort = request.effort.or(profile.effort);
    request.timeout = request.timeout.or(profile.timeout);
    // The plain form on Windows: the CLI's working directory, which cmd.exe refuses verbatim.
    request.workspace = crate::plain_path::canonicalize(&request.workspace)
        .ok()
        .filter(|path| path.is_dir())
        .ok_or_else(|| SetupError::WorkspaceMissing(request.workspace.clone()))?;
    add_repository_commands(config, &mut request);
    let earlier = sessions.check_resume(agent, &request)?;
    let program = find_cli(agent, config)?;
    let confined = sandbox::decide(config.sandbox, request.permission, KernelSupport::current())?;
    let mut command_line = build_command_line(config, agent, &request, &program, confined)?;
    let files = RunFiles::hand_over(agent, &request, &mut command_line)?;
    if program.start == Start::BatchFile
        && let Some(reason) = batch_file_refusal(&command_line)
    {
        return Err(SetupError::UnsafeBatchFile {
            agent: agent.name(),
            bin: program.path.clone(),
            reason,
        });
    }
    Ok(Prepared {
        agent,
        request,
        program,
        command_line,
        earlier,
        files,
    })
}

/// The configured setup and check of the workspace's repository, for a run that may write
/// or is isolated (a read-only run in place changes nothing to check).
fn add_repository_commands(config: &EngineConfig, request: &mut RunRequest) {
    let measured =
        request.permission != Permission::ReadOnly || request.isolation != Isolation::None;
    let Some(commands) = config.repository_commands(&request.workspace) else {
        return;
    };
    if measured {
        request.setup = commands.setup.clone();
        request.check = request.check.take().or_else(|| commands.check.clone());
    }
}

/// The CLI's command line. Its own flags get the level the CLI asks for under the kernel
/// sandbox when `confined` (see [`crate::cli::Cli::own_level_when_confined`]), or the
/// test-only level when one is configured ([`EngineConfig::test_cli_permission`]).
fn build_command_line(
    config: &EngineConfig,
    agent: Agent,
    request: &RunRequest,
    program: &FoundCli,
    confined: bool,
) -> Result<CommandLine, SetupError> {
    let cli = agent.cli();
    let permission = match config.test_cli_permission {
        Some(permission) => permission,
        None if confined => cli.own_level_when_confined(request.permission),
        None => request.permission,
    };
    let request = RunRequest {
        permission,
        ..request.clone()
    };
    let mut command_line = agent.command_line(&request, &program.path, &config.pass_env)?;
    program.start_command(&mut command_line);
    // A CLI found off PATH runs with its dir on PATH, unless the agent sets PATH itself.
    if let Some(path) = program.search_path()
        && !agent.profile().env.iter().any(|(name, _)| name == "PATH")
    {
        command_line.replace_env("PATH", path);
    }
    Ok(command_line)
}
