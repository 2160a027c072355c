//! Alibaba's Qwen Code: `qwen --output-format stream-json`, claude's stream-json.

mod command_line;
mod dialect;

use std::path::Path;

use crate::cli::{Cli, SchemaFlag};
use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::outcome::ErrorKind;
use crate::request::{Effort, RunRequest};

pub struct Qwen;

impl Cli for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn title(&self) -> &'static str {
        "Qwen Code (Alibaba)"
    }

    fn description(&self) -> &'static str {
        "Delegate a coding task to Qwen Code, which runs any OpenAI-compatible model (Qwen, \
         DeepSeek, a local server). Good for a second implementation or review from another \
         model family. At read-only it runs in plan mode: no shell, no edits."
    }

    fn npm_package(&self) -> &'static str {
        "@qwen-code/qwen-code"
    }

    fn verified_version(&self) -> &'static str {
        "0.24.4"
    }

    /// Its own variables (`QWEN_*`) and the keys and base URLs of the providers it reads from
    /// the environment: OpenAI-compatible (`OPENAI_*`) and DashScope (`DASHSCOPE_*`). A key
    /// named by a `modelProviders` entry's `envKey` is passed with `CAM_PASS_ENV`.
    fn own_env(&self) -> &'static [&'static str] {
        &["QWEN_*", "OPENAI_*", "DASHSCOPE_*"]
    }

    /// `$QWEN_HOME` (default `~/.qwen`).
    fn state_dirs(&self, env: CliEnv) -> Vec<std::path::PathBuf> {
        env.var("QWEN_HOME")
            .or_else(|| env.home(".qwen"))
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
        Box::<dialect::QwenDialect>::default()
    }

    /// The output and input formats, the approval mode and tool grants, the prompt flags,
    /// extra directories, the session flags, the model and the output schema.
    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "-o",
            "--output-format",
            "--input-format",
            "--approval-mode",
            "-y",
            "--yolo",
            "--allowed-tools",
            "--exclude-tools",
            "--core-tools",
            "-p",
            "--prompt",
            "-i",
            "--prompt-interactive",
            "--include-directories",
            "--add-dir",
            "-r",
            "--resume",
            "-c",
            "--continue",
            "--session-id",
            "--fork-session",
            "-m",
            "--model",
            "--json-schema",
        ]
    }

    /// `--resume=<id> --fork-session`.
    fn forks(&self) -> Result<(), &'static str> {
        Ok(())
    }

    /// Its thinking is a model setting of its settings file, not a flag.
    fn effort_option(&self, _effort: Effort) -> Result<Vec<String>, &'static str> {
        Err(
            "it has no per-run reasoning effort flag (its models' thinking is set in its \
             settings file): leave `effort` out, or choose a faster or stronger `model`",
        )
    }

    /// Headless, it offers the model a `structured_output` tool that takes the schema; the
    /// run ends at its first valid call.
    fn schema_flag(&self) -> Option<SchemaFlag> {
        Some(SchemaFlag::Inline("--json-schema"))
    }

    /// qwen restores a resumed session's token counts and adds this run's to them.
    fn usage_is_cumulative(&self) -> bool {
        true
    }

    /// Its sentence for a session it cannot resume, and gemini's (its upstream's) for a cut
    /// stream.
    fn error_wording(&self) -> &'static [(ErrorKind, &'static [&'static str])] {
        &[
            (ErrorKind::SessionNotFound, &["no saved session found"]),
            (ErrorKind::StreamCut, &["without a finish reason"]),
        ]
    }
}
