//! Google's Gemini CLI: `gemini --output-format stream-json`.

mod command_line;
pub(crate) mod dialect;

use std::path::Path;

use crate::cli::Cli;
use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::outcome::ErrorKind;
use crate::request::RunRequest;

pub struct Gemini;

impl Cli for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn title(&self) -> &'static str {
        "Gemini CLI (Google)"
    }

    fn description(&self) -> &'static str {
        "Delegate a task to Google's Gemini CLI. Good at reading a large codebase at once, \
         summarising logs and documents, and giving a second opinion. At read-only it runs \
         no shell commands."
    }

    fn npm_package(&self) -> &'static str {
        "@google/gemini-cli"
    }

    fn verified_version(&self) -> &'static str {
        "0.61.0"
    }

    /// Its key, home and switches (`GEMINI_*`), and Google's API key, Cloud project, Vertex
    /// switch and credentials (`GOOGLE_*`).
    fn own_env(&self) -> &'static [&'static str] {
        &["GEMINI_*", "GOOGLE_*"]
    }

    /// `.gemini` under `$GEMINI_CLI_HOME`, which stands in for the home (default `~/.gemini`).
    fn state_dirs(&self, env: CliEnv) -> Vec<std::path::PathBuf> {
        env.var("GEMINI_CLI_HOME")
            .map(|home| home.join(".gemini"))
            .or_else(|| env.home(".gemini"))
            .into_iter()
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
        Box::<dialect::GeminiDialect>::default()
    }

    /// The output format, the approval mode and tool grants, the prompt flags, extra
    /// directories and the session flag.
    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "-o",
            "--output-format",
            "--approval-mode",
            "-y",
            "--yolo",
            "--allowed-tools",
            "-p",
            "--prompt",
            "-i",
            "--prompt-interactive",
            "--include-directories",
            "-r",
            "--resume",
            "-m",
            "--model",
        ]
    }

    /// Its sentences for a session it cannot resume and for a cut stream.
    fn error_wording(&self) -> &'static [(ErrorKind, &'static [&'static str])] {
        &[
            (
                ErrorKind::SessionNotFound,
                &["no previous sessions", "invalid session identifier"],
            ),
            (ErrorKind::StreamCut, &["without a finish reason"]),
        ]
    }
}
