//! GitHub Copilot CLI: `copilot --output-format json`, its own session-event dialect.

mod command_line;
mod dialect;
mod usage;

use std::path::Path;

use crate::cli::{Cli, UsageFile};
use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::outcome::ErrorKind;
use crate::request::{Effort, RunRequest};
use crate::version;

pub struct Copilot;

impl Cli for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn title(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn description(&self) -> &'static str {
        "Delegate a coding task to GitHub Copilot CLI, with the models of a Copilot \
         subscription or your own provider (BYOK). Good at work tied to GitHub: issues, pull \
         requests, Actions."
    }

    fn npm_package(&self) -> &'static str {
        "@github/copilot"
    }

    fn verified_version(&self) -> &'static str {
        "1.0.102"
    }

    /// Its own variables (`COPILOT_*`: home, BYOK provider, model, offline mode) and the
    /// GitHub token and host it signs in with.
    fn own_env(&self) -> &'static [&'static str] {
        &["COPILOT_*", "GH_TOKEN", "GITHUB_TOKEN", "GH_HOST"]
    }

    /// `$COPILOT_HOME` (default `~/.copilot`), and `copilot` in the XDG cache, where it
    /// unpacks its bundled package on first start.
    fn state_dirs(&self, env: CliEnv) -> Vec<std::path::PathBuf> {
        let home = env.var("COPILOT_HOME").or_else(|| env.home(".copilot"));
        let cache = env
            .xdg("XDG_CACHE_HOME", ".cache")
            .map(|cache| cache.join("copilot"));
        home.into_iter().chain(cache).collect()
    }

    fn command_line(
        &self,
        request: &RunRequest,
        program: &Path,
    ) -> Result<CommandLine, SetupError> {
        Ok(command_line::command_line(request, program))
    }

    fn dialect(&self) -> Box<dyn Dialect> {
        Box::<dialect::CopilotDialect>::default()
    }

    /// The output format, the prompt flags, the tool, path and URL grants, the session
    /// flags and the model.
    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "--output-format",
            "-p",
            "--prompt",
            "-i",
            "--interactive",
            "--allow-all",
            "--yolo",
            "--allow-all-tools",
            "--allow-all-paths",
            "--allow-all-urls",
            "--allow-tool",
            "--deny-tool",
            "--available-tools",
            "--excluded-tools",
            "--add-dir",
            "-r",
            "--resume",
            "--continue",
            "--session-id",
            "--connect",
            "--model",
            "--reasoning-effort",
            "--usage-output-file",
        ]
    }

    /// Its stdout has no token counts; this file has them, for the whole session.
    fn usage_file(&self) -> Option<UsageFile> {
        Some(UsageFile {
            flag: "--usage-output-file",
            read: usage::read,
        })
    }

    fn usage_is_cumulative(&self) -> bool {
        true
    }

    /// copilot resumes a session from any directory.
    fn resumes_only_from_origin(&self) -> bool {
        false
    }

    /// It ends its sentence with a full stop: `GitHub Copilot CLI 1.0.102.`
    fn version_from(&self, output: &str) -> Option<String> {
        version::first_version(version::words(output).map(|word| word.trim_end_matches('.')))
    }

    /// It resumes a session only in place.
    fn forks(&self) -> Result<(), &'static str> {
        Err(
            "it resumes a session only in place (it has no fork): pass `session_id` \
             without `fork` to continue that session, or leave both out to start afresh",
        )
    }

    fn effort_option(&self, effort: Effort) -> Result<Vec<String>, &'static str> {
        Ok(vec![command_line::effort_option(effort)])
    }

    /// Its sentences for a session it cannot resume, a cut stream and a provider it cannot
    /// reach.
    fn error_wording(&self) -> &'static [(ErrorKind, &'static [&'static str])] {
        &[
            (
                ErrorKind::SessionNotFound,
                &["no session, task, or name matched"],
            ),
            (ErrorKind::StreamCut, &["missing finish_reason"]),
            (ErrorKind::Connection, &["could not connect"]),
        ]
    }
}
