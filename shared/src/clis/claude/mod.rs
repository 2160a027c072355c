//! Anthropic's Claude Code: `claude -p --output-format stream-json`.

mod command_line;
pub(crate) mod dialect;

use std::path::Path;

use crate::cli::{Cli, QuestionHook, SchemaFlag};
use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::outcome::ErrorKind;
use crate::request::{Effort, RunRequest};

pub struct Claude;

impl Cli for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn title(&self) -> &'static str {
        "Claude Code (Anthropic)"
    }

    fn description(&self) -> &'static str {
        "Delegate a coding task to Anthropic's Claude Code. Good at changes across many \
         files, careful reasoning about unfamiliar code, and writing tests and docs. \
         `append_system_prompt` adds standing instructions."
    }

    fn npm_package(&self) -> &'static str {
        "@anthropic-ai/claude-code"
    }

    fn verified_version(&self) -> &'static str {
        "2.1.332"
    }

    fn own_env(&self) -> &'static [&'static str] {
        command_line::OWN_ENV
    }

    /// `$CLAUDE_CONFIG_DIR` (default `~/.claude`).
    fn state_dirs(&self, env: CliEnv) -> Vec<std::path::PathBuf> {
        env.var("CLAUDE_CONFIG_DIR")
            .or_else(|| env.home(".claude"))
            .into_iter()
            .collect()
    }

    fn command_line(
        &self,
        request: &RunRequest,
        program: &Path,
    ) -> Result<CommandLine, SetupError> {
        command_line::command_line(request, program, crate::platform::running_as_root())
    }

    fn question_hook(&self) -> Option<QuestionHook> {
        Some(command_line::hand_questions)
    }

    fn dialect(&self) -> Box<dyn Dialect> {
        Box::<dialect::ClaudeDialect>::default()
    }

    /// The print mode and its formats, the permission mode and tool grants, extra
    /// directories, the session flags, the model and the output schema.
    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "-p",
            "--print",
            "--output-format",
            "--input-format",
            "--permission-mode",
            "--dangerously-skip-permissions",
            "--allow-dangerously-skip-permissions",
            "--allowedTools",
            "--allowed-tools",
            "--permission-prompt-tool",
            "--add-dir",
            "-r",
            "--resume",
            "-c",
            "--continue",
            "--session-id",
            "--fork-session",
            "--model",
            "--effort",
            "--json-schema",
        ]
    }

    /// `--resume=<id> --fork-session`.
    fn forks(&self) -> Result<(), &'static str> {
        Ok(())
    }

    fn effort_option(&self, effort: Effort) -> Result<Vec<String>, &'static str> {
        Ok(vec![command_line::effort_option(effort)])
    }

    fn schema_flag(&self) -> Option<SchemaFlag> {
        Some(SchemaFlag::Inline("--json-schema"))
    }

    fn extra_arguments(&self) -> &'static [&'static str] {
        &["append_system_prompt"]
    }

    /// Its sentence for a session it cannot resume.
    fn error_wording(&self) -> &'static [(ErrorKind, &'static [&'static str])] {
        &[(ErrorKind::SessionNotFound, &["no conversation found"])]
    }
}
