//! opencode: `opencode run --format json`, permission through its environment.

mod command_line;
pub(crate) mod dialect;

use std::path::Path;

use crate::cli::{Cli, ModelListing};
use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::outcome::ErrorKind;
use crate::request::{Effort, RunRequest};

pub struct Opencode;

impl Cli for Opencode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn title(&self) -> &'static str {
        "opencode"
    }

    fn description(&self) -> &'static str {
        "Delegate a coding task to opencode, with whichever model provider it is \
         configured for. Good when you want a model the other agents do not offer."
    }

    fn npm_package(&self) -> &'static str {
        "opencode-ai"
    }

    fn verified_version(&self) -> &'static str {
        "1.18.33"
    }

    fn own_env(&self) -> &'static [&'static str] {
        command_line::OWN_ENV
    }

    /// Its XDG data, config, cache and state directories.
    fn state_dirs(&self, env: CliEnv) -> Vec<std::path::PathBuf> {
        [
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_STATE_HOME", ".local/state"),
        ]
        .iter()
        .filter_map(|(name, default)| env.xdg(name, default))
        .map(|base| base.join("opencode"))
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
        Box::<dialect::OpencodeDialect>::default()
    }

    /// The output format, the approval switch, the session flags, the model and the
    /// working directory.
    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "--format",
            "--auto",
            "-s",
            "--session",
            "-c",
            "--continue",
            "-m",
            "--model",
            "--dir",
            "--fork",
            "--variant",
        ]
    }

    /// `opencode models`: one `provider/model` a line.
    fn model_listing(&self) -> Option<ModelListing> {
        Some(ModelListing {
            args: &["models"],
            read: command_line::listed_models,
        })
    }

    /// `--session=<id> --fork`.
    fn forks(&self) -> Result<(), &'static str> {
        Ok(())
    }

    fn effort_option(&self, effort: Effort) -> Result<Vec<String>, &'static str> {
        Ok(vec![command_line::effort_option(effort)])
    }

    /// Its sentence for a provider it cannot reach.
    fn error_wording(&self) -> &'static [(ErrorKind, &'static [&'static str])] {
        &[(ErrorKind::Connection, &["cannot connect"])]
    }
}
