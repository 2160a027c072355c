//! Layering: flags, then environment, then the config file, then defaults. clap already puts
//! flags over environment over defaults; a file value becomes the argument's default, checked
//! first by the argument's own parser so a bad value is reported on its line.

use std::collections::HashMap;

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};
use serde::Serialize;

use super::file::{ConfigFile, FileError, STORE_VARS};

/// Where a setting's value came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Source {
    Flag,
    Env { var: String },
    File { at: String },
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Flag => f.write_str("flag"),
            Self::Env { var } => write!(f, "env {var}"),
            Self::File { at } => write!(f, "file {at}"),
            Self::Default => f.write_str("default"),
        }
    }
}

/// The places in the file that set arguments' defaults, by argument id.
pub type FileDefaults = HashMap<String, String>;

/// Make the file's values the defaults of the arguments they name, in the root command and
/// in every subcommand that has the argument.
pub fn apply(
    mut command: Command,
    file: &ConfigFile,
    extra: Vec<(String, Vec<String>, Vec<String>)>,
) -> Result<(Command, FileDefaults), FileError> {
    let mut placed = FileDefaults::new();
    let store_keys: Vec<_> = STORE_VARS.iter().map(|(key, _)| *key).collect();
    let top = file
        .top_level()
        .into_iter()
        .filter(|(key, _)| !store_keys.contains(&key.as_str()))
        .map(|(key, values)| (key.clone(), values, vec![key]));
    for (id, values, key_path) in top.chain(extra) {
        let key_path: Vec<&str> = key_path.iter().map(String::as_str).collect();
        check(&command, &id, &values).map_err(|message| file.error(&key_path, message))?;
        command = set_default(command, &id, values);
        placed.insert(id, file.place(&key_path));
    }
    Ok((command, placed))
}

/// Run each value through the argument's own parser, as if it were given on the command line.
fn check(command: &Command, id: &str, values: &[String]) -> Result<(), String> {
    let arg = command
        .get_arguments()
        .find(|arg| arg.get_id() == id)
        .ok_or_else(|| format!("`{id}` is not a setting"))?;
    let long = arg.get_long().unwrap_or(id);
    let probe = Command::new("probe")
        .no_binary_name(true)
        .arg(arg.clone().global(false));
    for value in values {
        probe
            .clone()
            .try_get_matches_from([format!("--{long}={value}")])
            .map_err(|error| {
                let text = error.to_string();
                let first = text.lines().next().unwrap_or_default();
                format!("{id}: {}", first.trim_start_matches("error: "))
            })?;
    }
    Ok(())
}

fn set_default(command: Command, id: &str, values: Vec<String>) -> Command {
    let has = |command: &Command| command.get_arguments().any(|arg| arg.get_id() == id);
    let subcommands: Vec<String> = command
        .get_subcommands()
        .filter(|sub| has(sub))
        .map(|sub| sub.get_name().to_owned())
        .collect();
    let values_for_root = values.clone();
    let mut command = command.mut_arg(id, |arg| arg.default_values(values_for_root));
    for name in subcommands {
        let values = values.clone();
        command = command.mut_subcommand(name, |sub| {
            sub.mut_arg(id, |arg| arg.default_values(values))
        });
    }
    command
}

/// Where the value of argument `id` in `matches` came from; `None` when it has none.
pub fn source_of(
    command: &Command,
    matches: &ArgMatches,
    id: &str,
    file: &FileDefaults,
) -> Option<Source> {
    let source = match matches.value_source(id)? {
        ValueSource::CommandLine => Source::Flag,
        ValueSource::EnvVariable => Source::Env {
            var: command
                .get_arguments()
                .find(|arg| arg.get_id() == id)
                .and_then(|arg| arg.get_env())
                .map(|var| var.to_string_lossy().into_owned())
                .unwrap_or_default(),
        },
        _ => match file.get(id) {
            Some(at) => Source::File { at: at.clone() },
            None => Source::Default,
        },
    };
    Some(source)
}
