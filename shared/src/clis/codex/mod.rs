//! OpenAI's Codex CLI: `codex exec --json`, sandboxed by the OS.

mod command_line;
pub(crate) mod dialect;

use std::path::Path;

use crate::cli::{Cli, ModelListing, SchemaFlag};
use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::outcome::ErrorKind;
use crate::request::{Effort, Permission, RunRequest};

pub struct Codex;

impl Cli for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn title(&self) -> &'static str {
        "Codex (OpenAI)"
    }

    fn description(&self) -> &'static str {
        "Delegate a coding task to OpenAI's Codex CLI. Good at focused changes, running and \
         fixing tests, shell-heavy investigation and reviewing a diff. Its permission level \
         is enforced by an OS sandbox."
    }

    fn npm_package(&self) -> &'static str {
        "@openai/codex"
    }

    fn verified_version(&self) -> &'static str {
        "0.171.0"
    }

    /// Its API key and base URL, and its home (config, sessions, auth). A custom provider's
    /// `env_key` is passed with `CAM_PASS_ENV`.
    fn own_env(&self) -> &'static [&'static str] {
        &["OPENAI_*", "CODEX_*"]
    }

    /// `$CODEX_HOME` (default `~/.codex`): sessions, logs, auth.
    fn state_dirs(&self, env: CliEnv) -> Vec<std::path::PathBuf> {
        env.var("CODEX_HOME")
            .or_else(|| env.home(".codex"))
            .into_iter()
            .collect()
    }

    /// Unlimited (`-s danger-full-access`): codex's own sandbox runs shell commands in
    /// bubblewrap, which must write `/proc/<pid>/uid_map` and so cannot start inside the
    /// kernel sandbox; the kernel sandbox bounds its writes instead. What is lost is codex's
    /// network block for shell commands.
    fn own_level_when_confined(&self, _level: Permission) -> Permission {
        Permission::Unlimited
    }

    fn command_line(
        &self,
        request: &RunRequest,
        program: &Path,
    ) -> Result<CommandLine, SetupError> {
        Ok(command_line::command_line(request, program))
    }

    fn dialect(&self) -> Box<dyn Dialect> {
        Box::<dialect::CodexDialect>::default()
    }

    /// The sandbox, the output format, the working directory, extra writable roots, the
    /// model and the output schema.
    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "--json",
            "-s",
            "--sandbox",
            "--full-auto",
            "--dangerously-bypass-approvals-and-sandbox",
            "-a",
            "--ask-for-approval",
            "-C",
            "--cd",
            "--add-dir",
            "-c=sandbox_mode",
            "--config=sandbox_mode",
            "-c=model_reasoning_effort",
            "--config=model_reasoning_effort",
            "-m",
            "--model",
            "--output-schema",
        ]
    }

    /// `codex exec fork <id>`.
    fn forks(&self) -> Result<(), &'static str> {
        Ok(())
    }

    fn effort_option(&self, effort: Effort) -> Result<Vec<String>, &'static str> {
        Ok(vec![command_line::effort_option(effort)])
    }

    /// `codex debug models`: its model catalog as JSON.
    fn model_listing(&self) -> Option<ModelListing> {
        Some(ModelListing {
            args: &["debug", "models"],
            read: command_line::listed_models,
        })
    }

    /// `exec` and `exec resume` read the schema from a file.
    fn schema_flag(&self) -> Option<SchemaFlag> {
        Some(SchemaFlag::File("--output-schema"))
    }

    /// `codex exec --json` reports a thread's usage summed over all its turns.
    fn usage_is_cumulative(&self) -> bool {
        true
    }

    /// codex resumes a thread from any directory.
    fn resumes_only_from_origin(&self) -> bool {
        false
    }

    /// Its session, stream and connection sentences, and the one it puts in place of a 500's.
    fn error_wording(&self) -> &'static [(ErrorKind, &'static [&'static str])] {
        &[
            (ErrorKind::SessionNotFound, &["no rollout found"]),
            (
                ErrorKind::StreamCut,
                &["stream disconnected", "stream closed before"],
            ),
            (
                ErrorKind::Connection,
                &["connection failed", "error sending request"],
            ),
            (ErrorKind::ServerError, &["high demand"]),
        ]
    }
}
