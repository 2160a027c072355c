//! Settings from the command line, the environment and the config file, in that order of
//! precedence, then the defaults; and the agents they define.
//!
//! `file` reads and checks the TOML file, `layer` turns its values into the arguments'
//! defaults and says where each value came from, `agents` builds the agents on offer, and
//! `report` reports it all (`cli-agent-mcp config` prints it).

mod agents;
mod file;
mod layer;
pub mod report;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, FromArgMatches};
use cli_agent_engine::clis::BUILTINS;
use cli_agent_engine::{Agent, EngineConfig};

pub use self::agents::Configured;
use self::file::{ConfigFile, FileError, Location, STORE_VARS};
use self::layer::{FileDefaults, Source};
use crate::args::{self, Arguments};
use crate::jobs::store::StoreSettings;
use crate::offer::{JobTool, Offer};
use cli_agent_engine::config::RepositoryCommands;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    File(#[from] FileError),
    #[error("{0}")]
    Args(String),
}

/// Everything the command line, the environment and the config file say.
pub struct Loaded {
    pub args: Arguments,
    matches: ArgMatches,
    command: clap::Command,
    location: Location,
    file: Option<ConfigFile>,
    file_defaults: FileDefaults,
    agents: Vec<Configured>,
    store: Vec<StoreSetting>,
}

/// A job store setting: its variable, else its key in the file.
struct StoreSetting {
    key: &'static str,
    var: &'static str,
    value: Option<OsString>,
    source: Source,
}

/// Read the config file and parse the process's arguments over it. `--help`, `--version`
/// and argument errors print and exit as clap does.
pub fn load() -> Result<Loaded, ConfigError> {
    let argv: Vec<OsString> = std::env::args_os().collect();
    load_from(argv)
}

fn load_from(argv: Vec<OsString>) -> Result<Loaded, ConfigError> {
    let location = Location::find(config_flag(&argv), |name| std::env::var(name).ok());
    let file = location.read()?;
    let (mut command, file_defaults) = layered(args::command(), file.as_ref())?;
    let matches = command
        .try_get_matches_from_mut(argv)
        .unwrap_or_else(|error| error.exit());
    let args =
        Arguments::from_arg_matches(&matches).map_err(|e| ConfigError::Args(e.to_string()))?;
    let agents = agents::build(file.as_ref(), &JobTool::ALL.map(JobTool::name))?;
    let store = store_settings(file.as_ref());
    Ok(Loaded {
        args,
        matches,
        command,
        location,
        file,
        file_defaults,
        agents,
        store,
    })
}

/// `command` with the file's values as its arguments' defaults.
fn layered(
    command: clap::Command,
    file: Option<&ConfigFile>,
) -> Result<(clap::Command, FileDefaults), FileError> {
    match file {
        Some(file) => layer::apply(command, file, builtin_bins(file)),
        None => Ok((command, FileDefaults::new())),
    }
}

impl Loaded {
    /// The engine's settings, with every binary configured.
    pub fn engine_config(&self) -> EngineConfig {
        let mut binaries: HashMap<String, PathBuf> = BUILTINS
            .iter()
            .filter_map(|cli| {
                let bin = self.matches.get_one::<PathBuf>(&args::bin_arg_id(*cli))?;
                Some((cli.name().to_owned(), bin.clone()))
            })
            .collect();
        for configured in &self.agents {
            if let Some(bin) = &configured.bin {
                binaries.insert(configured.agent.name().to_owned(), bin.clone());
            }
        }
        let mut config = self.args.options.engine.config(binaries);
        config.repositories = self.repositories();
        config
    }

    /// `[repositories."<path>"]`, each path as it resolves now (a missing one as written).
    fn repositories(&self) -> Vec<RepositoryCommands> {
        let Some(file) = &self.file else {
            return Vec::new();
        };
        let repositories = &file.settings.repositories;
        repositories
            .iter()
            .map(|(path, settings)| RepositoryCommands {
                path: cli_agent_engine::plain_path::canonicalize(path)
                    .unwrap_or_else(|_| path.clone()),
                setup: settings.setup.clone(),
                check: settings.check.clone(),
            })
            .collect()
    }

    pub fn agents(&self) -> Vec<Agent> {
        self.agents
            .iter()
            .map(|configured| configured.agent)
            .collect()
    }

    /// The tools the server may offer.
    pub fn offers(&self) -> Vec<Offer> {
        self.agents
            .iter()
            .map(|configured| Offer {
                agent: configured.agent,
                note: configured.description.clone(),
                max_runs: configured.max_runs,
            })
            .collect()
    }

    /// The job store's settings.
    pub fn store_settings(&self) -> StoreSettings {
        StoreSettings::from_values(|var| {
            let setting = self.store.iter().find(|setting| setting.var == var)?;
            setting.value.clone()
        })
    }
}

/// The file's `bin` of each built-in agent, as the default of its `--<cli>-bin` argument.
fn builtin_bins(file: &ConfigFile) -> Vec<(String, Vec<String>, Vec<String>)> {
    BUILTINS
        .iter()
        .filter_map(|cli| {
            let bin = file.settings.agents.get(cli.name())?.bin.as_ref()?;
            Some((
                args::bin_arg_id(*cli),
                vec![bin.to_string_lossy().into_owned()],
                ["agents", cli.name(), "bin"].map(str::to_owned).to_vec(),
            ))
        })
        .collect()
}

fn store_settings(file: Option<&ConfigFile>) -> Vec<StoreSetting> {
    let in_file: HashMap<String, Vec<String>> = file
        .map(ConfigFile::top_level)
        .unwrap_or_default()
        .into_iter()
        .collect();
    STORE_VARS
        .iter()
        .map(|&(key, var)| {
            let from_env = std::env::var_os(var).filter(|value| !value.is_empty());
            let from_file = in_file
                .get(key)
                .and_then(|values| values.first().map(OsString::from));
            let (value, source) = match (from_env, from_file, file) {
                (Some(value), _, _) => (
                    Some(value),
                    Source::Env {
                        var: var.to_owned(),
                    },
                ),
                (None, Some(value), Some(file)) => (
                    Some(value),
                    Source::File {
                        at: file.place(&[key]),
                    },
                ),
                _ => (None, Source::Default),
            };
            StoreSetting {
                key,
                var,
                value,
                source,
            }
        })
        .collect()
}

/// `--config PATH` or `--config=PATH`, read before clap so the file can set clap's defaults.
fn config_flag(argv: &[OsString]) -> Option<PathBuf> {
    let mut found = None;
    let mut args = argv.iter().skip(1).map(|arg| arg.to_string_lossy());
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        if arg == "--config" {
            found = args.next().map(|path| PathBuf::from(path.as_ref()));
        } else if let Some(path) = arg.strip_prefix("--config=") {
            found = Some(PathBuf::from(path));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::file::FileSettings;
    use super::*;

    /// Every key a file may hold, as `top_level` gives them.
    fn file_keys() -> Vec<String> {
        let every = FileSettings {
            default_timeout_secs: Some(1),
            idle_timeout_secs: Some(1),
            grace_secs: Some(1.0),
            max_line_bytes: Some(1),
            pass_env: Some(vec!["X".into()]),
            sandbox: Some("auto".into()),
            no_login_shell: Some(true),
            log: Some("info".into()),
            log_file: Some("/x".into()),
            enable: Some(vec!["codex".into()]),
            disable: Some(vec!["codex".into()]),
            sigint: Some("exit".into()),
            allow_root: Some(vec!["/x".into()]),
            max_permission: Some("read-only".into()),
            ask_beyond_bounds: Some("refuse".into()),
            ask_timeout_secs: Some(1),
            park_questions: Some(true),
            progress_heartbeat_secs: Some(1),
            max_runs: Some(1),
            handoff_secs: Some(1),
            max_result_chars: Some(1),
            http: Some("127.0.0.1:8765".into()),
            http_token_file: Some("/x".into()),
            http_allowed_host: Some(vec!["x".into()]),
            http_allowed_origin: Some(vec!["https://x".into()]),
            http_max_body_bytes: Some(1),
            http_max_requests: Some(1),
            http_max_streams: Some(1),
            state_dir: Some("/x".into()),
            job_retention_days: Some(1),
            transcript_max_bytes: Some(1),
            max_worktrees: Some(1),
            agents: Default::default(),
            repositories: Default::default(),
        };
        let table = toml::Table::try_from(&every).expect("serializes");
        table.keys().cloned().collect()
    }

    #[test]
    fn every_file_key_is_an_argument_or_a_store_setting_and_every_argument_has_a_key() {
        let command = args::command();
        let ids: Vec<&str> = command
            .get_arguments()
            .map(|arg| arg.get_id().as_str())
            .collect();
        let keys = file_keys();
        let store: Vec<_> = STORE_VARS.iter().map(|(key, _)| *key).collect();
        for key in &keys {
            assert!(
                ids.contains(&key.as_str()) || store.contains(&key.as_str()),
                "file key {key} sets nothing"
            );
        }
        // Set through [agents.<cli>].bin, or where the file itself is; or test-only.
        let elsewhere = |id: &str| {
            id.ends_with("_bin")
                || matches!(
                    id,
                    "config" | "help" | "version" | "conformance_fixtures" | "test_cli_permission"
                )
        };
        for id in ids.into_iter().filter(|id| !elsewhere(id)) {
            assert!(
                keys.iter().any(|key| key == id),
                "--{id} has no config file key"
            );
        }
    }

    #[test]
    fn the_config_flag_is_found_before_clap_parses() {
        let argv = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
        let found = |args: &[&str]| config_flag(&argv(args));
        assert_eq!(
            found(&["cam", "--config", "/a.toml", "serve"]),
            Some("/a.toml".into())
        );
        assert_eq!(
            found(&["cam", "doctor", "--config=/b.toml"]),
            Some("/b.toml".into())
        );
        assert_eq!(
            found(&["cam", "run", "codex", "--", "--config=/c.toml"]),
            None
        );
        assert_eq!(found(&["cam", "serve"]), None);
    }
}
