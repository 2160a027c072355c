//! Cline's CLI: `cline --json`, NDJSON events ending in a `run_result`.

mod command_line;
mod dialect;

use std::path::Path;

use crate::cli::Cli;
use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::outcome::ErrorKind;
use crate::request::{Effort, RunRequest};

pub struct Cline;

impl Cli for Cline {
    fn name(&self) -> &'static str {
        "cline"
    }

    fn title(&self) -> &'static str {
        "Cline"
    }

    fn description(&self) -> &'static str {
        "Delegate a coding task to Cline's CLI, with the provider and model saved by `cline \
         auth`. At read-only it runs in plan mode: it reads, and refuses edits and commands \
         that change files. It cannot resume: no session_id comes back, so put what a \
         follow-up needs in its prompt."
    }

    fn npm_package(&self) -> &'static str {
        "cline"
    }

    fn verified_version(&self) -> &'static str {
        "3.0.65"
    }

    /// Its own variables (`CLINE_*`: its config dir, data dirs, key) and the keys of the
    /// providers it reads from the environment.
    fn own_env(&self) -> &'static [&'static str] {
        &[
            "CLINE_*",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "AI_GATEWAY_API_KEY",
            "V0_API_KEY",
        ]
    }

    /// `$CLINE_DIR` (default `~/.cline`): its settings, sessions, databases and logs, and
    /// `$CLINE_DATA_DIR` when that moves them elsewhere.
    fn state_dirs(&self, env: CliEnv) -> Vec<std::path::PathBuf> {
        let config = env.var("CLINE_DIR").or_else(|| env.home(".cline"));
        config
            .into_iter()
            .chain(env.var("CLINE_DATA_DIR"))
            .collect()
    }

    fn command_line(
        &self,
        request: &RunRequest,
        program: &Path,
    ) -> Result<CommandLine, SetupError> {
        Ok(command_line::command_line(request, program))
    }

    fn dialect(&self) -> Box<dyn Dialect> {
        Box::<dialect::ClineDialect>::default()
    }

    /// The output format, the modes and approval, the interactive and background front
    /// ends, the session, the model and the directories it works and keeps state in.
    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "--json",
            "-p",
            "--plan",
            "-a",
            "--act",
            "-y",
            "--yolo",
            "-z",
            "--zen",
            "--auto-approve",
            "-i",
            "--tui",
            "--acp",
            "--kanban",
            "--update",
            "--id",
            "-m",
            "--model",
            "-c",
            "--cwd",
            "--config",
            "--data-dir",
            "--worktree",
            "--thinking",
        ]
    }

    /// Its headless output names no session, and `--id` resumes only in its terminal UI.
    fn resumes(&self) -> Result<(), &'static str> {
        Err(
            "its headless output names no session and it resumes only in its terminal UI: \
             leave `session_id` out and put what the follow-up needs in the prompt",
        )
    }

    fn effort_option(&self, effort: Effort) -> Result<Vec<String>, &'static str> {
        Ok(vec![command_line::effort_option(effort)])
    }

    /// It classes a provider's error (the dialect appends the class) but passes on no
    /// HTTP status.
    fn error_wording(&self) -> &'static [(ErrorKind, &'static [&'static str])] {
        &[
            (ErrorKind::Authentication, &["(auth error)"]),
            (ErrorKind::BadRequest, &["(context_window_exceeded error)"]),
        ]
    }
}
