//! pi (`@mariozechner/pi-coding-agent`): `pi -p --mode json`, a session header then its
//! agent's events.

mod command_line;
mod dialect;

use std::path::Path;

use crate::cli::{Cli, ModelListing};
use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::outcome::ErrorKind;
use crate::request::{Effort, RunRequest};

pub struct Pi;

impl Cli for Pi {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn title(&self) -> &'static str {
        "pi"
    }

    fn description(&self) -> &'static str {
        "Delegate a coding task to pi, a small coding agent for any provider it is configured \
         for (Anthropic, OpenAI, Google, OpenRouter, a local server). It asks no permission: \
         at read-only it has only its read, grep, find and ls tools."
    }

    fn npm_package(&self) -> &'static str {
        "@mariozechner/pi-coding-agent"
    }

    fn verified_version(&self) -> &'static str {
        "0.73.1"
    }

    /// Its own variables (`PI_*`: its agent and session dirs, offline mode) and the keys of
    /// the providers it reads from the environment. Cloud credentials (`AWS_*` for Bedrock,
    /// Vertex) are passed with `CAM_PASS_ENV`.
    fn own_env(&self) -> &'static [&'static str] {
        &[
            "PI_*",
            "ANTHROPIC_*",
            "OPENAI_*",
            "AZURE_OPENAI_*",
            "GEMINI_*",
            "OPENROUTER_*",
            "DEEPSEEK_API_KEY",
            "GROQ_API_KEY",
            "CEREBRAS_API_KEY",
            "XAI_API_KEY",
            "FIREWORKS_API_KEY",
            "MISTRAL_API_KEY",
            "AI_GATEWAY_API_KEY",
        ]
    }

    /// `$PI_CODING_AGENT_DIR` (default `~/.pi/agent`, where its sessions are too) and
    /// `$PI_CODING_AGENT_SESSION_DIR` when set.
    fn state_dirs(&self, env: CliEnv) -> Vec<std::path::PathBuf> {
        let agent = env
            .var("PI_CODING_AGENT_DIR")
            .or_else(|| env.home(".pi/agent"));
        let sessions = env.var("PI_CODING_AGENT_SESSION_DIR");
        agent.into_iter().chain(sessions).collect()
    }

    fn command_line(
        &self,
        request: &RunRequest,
        program: &Path,
    ) -> Result<CommandLine, SetupError> {
        Ok(command_line::command_line(request, program))
    }

    fn dialect(&self) -> Box<dyn Dialect> {
        Box::<dialect::PiDialect>::default()
    }

    /// The output mode, the prompt flag, the tool choice, the session flags and the model.
    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "--mode",
            "-p",
            "--print",
            "--tools",
            "-t",
            "--no-tools",
            "-nt",
            "--no-builtin-tools",
            "-nbt",
            "--session",
            "--fork",
            "--session-dir",
            "--no-session",
            "-c",
            "--continue",
            "-r",
            "--resume",
            "--model",
            "--models",
            "--thinking",
        ]
    }

    /// `--list-models`: the models of the providers it has keys for, as `provider/model`.
    fn model_listing(&self) -> Option<ModelListing> {
        Some(ModelListing {
            args: &["--list-models"],
            read: command_line::listed_models,
        })
    }

    /// `--fork ID`: a new session from the given one's context (its header names the parent).
    fn forks(&self) -> Result<(), &'static str> {
        Ok(())
    }

    fn effort_option(&self, effort: Effort) -> Result<Vec<String>, &'static str> {
        Ok(command_line::effort_words(effort))
    }

    /// Its sentences for a session it cannot find and for a provider it cannot reach (its
    /// providers' SDKs say `Connection error.`).
    fn error_wording(&self) -> &'static [(ErrorKind, &'static [&'static str])] {
        &[
            (ErrorKind::SessionNotFound, &["no session found matching"]),
            (ErrorKind::Connection, &["connection error"]),
        ]
    }
}
