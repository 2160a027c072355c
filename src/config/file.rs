//! The config file: where it is, its schema, and errors that name the file, line and key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cli_agent_engine::{Effort, Isolation};
use serde::{Deserialize, Serialize};

use crate::jobs::store::dir;

/// The settings a config file may hold. Each top-level key is the id of the command-line
/// argument it sets (`max_runs` sets `--max-runs`), except the job store's and `agents`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    pub default_timeout_secs: Option<u64>,
    pub idle_timeout_secs: Option<u64>,
    pub grace_secs: Option<f64>,
    pub max_line_bytes: Option<u64>,
    pub pass_env: Option<Vec<String>>,
    pub sandbox: Option<String>,
    pub no_login_shell: Option<bool>,
    pub log: Option<String>,
    pub log_file: Option<PathBuf>,
    pub enable: Option<Vec<String>>,
    pub disable: Option<Vec<String>>,
    pub sigint: Option<String>,
    pub allow_root: Option<Vec<PathBuf>>,
    pub max_permission: Option<String>,
    pub ask_beyond_bounds: Option<String>,
    pub ask_timeout_secs: Option<u64>,
    pub park_questions: Option<bool>,
    pub progress_heartbeat_secs: Option<u64>,
    pub max_runs: Option<u64>,
    pub max_worktrees: Option<u64>,
    pub handoff_secs: Option<u64>,
    pub max_result_chars: Option<u64>,
    pub http: Option<String>,
    pub http_token_file: Option<PathBuf>,
    pub http_allowed_host: Option<Vec<String>>,
    pub http_allowed_origin: Option<Vec<String>>,
    pub http_max_body_bytes: Option<u64>,
    pub http_max_requests: Option<u64>,
    pub http_max_streams: Option<u64>,
    /// The job store's settings, under their variables: see [`STORE_VARS`].
    pub state_dir: Option<PathBuf>,
    pub job_retention_days: Option<u64>,
    pub transcript_max_bytes: Option<u64>,
    /// `[agents.<name>]`: settings of a built-in agent, or a custom agent with `base`.
    #[serde(default, skip_serializing)]
    pub agents: BTreeMap<String, AgentSettings>,
    /// `[repositories."<path>"]`: the setup and check commands of a repository.
    #[serde(default, skip_serializing)]
    pub repositories: BTreeMap<PathBuf, RepositorySettings>,
}

/// `[repositories."<path>"]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepositorySettings {
    /// Prepares an isolated run's new worktree before the agent starts.
    pub setup: Option<String>,
    /// Run in a run's tree after the agent ends, unless the call names its own.
    pub check: Option<String>,
}

/// The keys of the job store's settings and their variables, which win over the file.
pub const STORE_VARS: [(&str, &str); 3] = [
    ("state_dir", dir::STATE_DIR_VAR),
    ("job_retention_days", dir::RETENTION_DAYS_VAR),
    ("transcript_max_bytes", dir::TRANSCRIPT_MAX_BYTES_VAR),
];

/// `[agents.<name>]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    /// The built-in CLI a custom agent runs; absent for a built-in agent.
    pub base: Option<String>,
    pub bin: Option<PathBuf>,
    /// The model when a call names none.
    pub model: Option<String>,
    /// The reasoning effort when a call names none.
    pub effort: Option<Effort>,
    /// Appended to the CLI's options (before any `--`); flags only, values bound with `=`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Set in the CLI's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub timeout_secs: Option<u64>,
    pub idle_timeout_secs: Option<u64>,
    pub max_runs: Option<u64>,
    /// `false` removes the agent.
    pub enabled: Option<bool>,
    /// Shown first in its tool's description.
    pub description: Option<String>,
    /// Where its runs work when a call does not say: `none` or `worktree`.
    pub isolation: Option<Isolation>,
    /// Directories its runs may also write under the sandbox at `workspace-write`.
    #[serde(default)]
    pub writable: Vec<PathBuf>,
}

/// A config file as read: its path, its text and its settings.
#[derive(Debug)]
pub struct ConfigFile {
    pub path: PathBuf,
    text: String,
    pub settings: FileSettings,
}

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read the config file {}: {source}. Fix the path given by --config or CAM_CONFIG, or create the file", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", .path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// Where the config file is: `--config`, else `CAM_CONFIG`, else the default file if it
/// exists. `Explicit` files must exist; the default one may not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Explicit(PathBuf),
    Default(PathBuf),
    None,
}

impl Location {
    /// `$XDG_CONFIG_HOME/cli-agent-mcp/config.toml`, else `~/.config/cli-agent-mcp/config.toml`;
    /// on Windows `%APPDATA%\cli-agent-mcp\config.toml` (the user's roaming settings).
    pub fn find(explicit: Option<PathBuf>, env: impl Fn(&str) -> Option<String>) -> Self {
        Self::find_for(explicit, env, cfg!(windows))
    }

    fn find_for(
        explicit: Option<PathBuf>,
        env: impl Fn(&str) -> Option<String>,
        windows: bool,
    ) -> Self {
        let var = |name| env(name).filter(|value| !value.is_empty());
        if let Some(path) = explicit.or_else(|| var("CAM_CONFIG").map(PathBuf::from)) {
            return Self::Explicit(path);
        }
        if windows {
            return match var("APPDATA").map(PathBuf::from) {
                Some(appdata) if appdata.is_absolute() => {
                    Self::Default(appdata.join("cli-agent-mcp").join("config.toml"))
                }
                _ => Self::None,
            };
        }
        // The XDG spec says a relative path there is invalid and to be ignored.
        let base = match var("XDG_CONFIG_HOME").map(PathBuf::from) {
            Some(config) if config.is_absolute() => config,
            _ => match var("HOME") {
                Some(home) => Path::new(&home).join(".config"),
                None => return Self::None,
            },
        };
        Self::Default(base.join("cli-agent-mcp/config.toml"))
    }

    /// The file's settings; `None` when there is no file to read.
    pub fn read(&self) -> Result<Option<ConfigFile>, FileError> {
        let (path, required) = match self {
            Self::Explicit(path) => (path, true),
            Self::Default(path) => (path, false),
            Self::None => return Ok(None),
        };
        match std::fs::read_to_string(path) {
            Ok(text) => ConfigFile::parse(path.clone(), text).map(Some),
            Err(error) if !required && error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(FileError::Read {
                path: path.clone(),
                source,
            }),
        }
    }
}

impl ConfigFile {
    pub fn parse(path: PathBuf, text: String) -> Result<Self, FileError> {
        match toml::from_str(&text) {
            Ok(settings) => Ok(Self {
                path,
                text,
                settings,
            }),
            Err(error) => {
                let at = error.span().map_or(0, |span| span.start);
                let message = error.message().trim_end();
                let message = match key_at(&text, at) {
                    // serde names an unknown key, but not the key of a value of a wrong type.
                    Some(key) if !message.contains(&key) => format!("{key}: {message}"),
                    _ => message.to_owned(),
                };
                Err(FileError::Invalid {
                    path,
                    line: line_at(&text, at),
                    message,
                })
            }
        }
    }

    /// The top-level values other than `agents`, each as the strings a command line would
    /// give (an array gives one per element), with their keys.
    pub fn top_level(&self) -> Vec<(String, Vec<String>)> {
        // Settings of plain types always serialize; an error would leave the file unapplied.
        let table = toml::Table::try_from(&self.settings).unwrap_or_default();
        table
            .into_iter()
            .map(|(key, value)| {
                let values = match value {
                    toml::Value::Array(items) => items.into_iter().map(plain).collect(),
                    other => vec![plain(other)],
                };
                (key, values)
            })
            .collect()
    }

    /// An error about the value at `key_path` (`["agents", "work", "args"]`), on its line.
    pub fn error(&self, key_path: &[&str], message: impl Into<String>) -> FileError {
        FileError::Invalid {
            path: self.path.clone(),
            line: self.line_of(key_path),
            message: message.into(),
        }
    }

    /// `path:line` of the key at `key_path`, for provenance.
    pub fn place(&self, key_path: &[&str]) -> String {
        format!("{}:{}", self.path.display(), self.line_of(key_path))
    }

    /// The line of the key at `key_path`; the deepest key found when a part is missing.
    fn line_of(&self, key_path: &[&str]) -> usize {
        let Ok(root) = toml::de::DeTable::parse(&self.text) else {
            return 1;
        };
        let mut table = root.get_ref();
        let mut at = 0;
        for part in key_path {
            let Some((key, value)) = table.iter().find(|(key, _)| key.get_ref() == part) else {
                break;
            };
            at = key.span().start;
            match value.get_ref() {
                toml::de::DeValue::Table(inner) => table = inner,
                _ => break,
            }
        }
        line_at(&self.text, at)
    }
}

/// The key written on the line that holds `offset`, as in `key = value`.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let line = text.lines().nth(line_at(text, offset) - 1)?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && !key.starts_with(['#', '['])).then(|| key.to_owned())
}

/// A scalar as text: a string without its quotes.
fn plain(value: toml::Value) -> String {
    match value {
        toml::Value::String(text) => text,
        other => other.to_string(),
    }
}

fn line_at(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ConfigFile, FileError> {
        ConfigFile::parse(PathBuf::from("/etc/cam.toml"), text.to_owned())
    }

    #[test]
    fn an_unknown_key_is_named_with_its_file_and_line() {
        let error = parse("max_runs = 2\n\n[agents.codex]\nmodle = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("/etc/cam.toml:4: "), "{error}");
        assert!(error.contains("unknown field `modle`"), "{error}");
        let error = parse("max_run = 2\n").unwrap_err().to_string();
        assert!(error.starts_with("/etc/cam.toml:1: "), "{error}");
        assert!(error.contains("max_run"), "{error}");
    }

    #[test]
    fn a_value_of_the_wrong_type_is_named_by_its_key_and_line() {
        let error = parse("[agents.codex]\nmodel = \"m\"\ntimeout_secs = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("/etc/cam.toml:3: timeout_secs: "),
            "{error}"
        );
    }

    #[test]
    fn a_key_is_found_on_its_line() {
        let file = parse("max_runs = 2\n\n[agents.work]\nbase = \"codex\"\nargs = [\"-x\"]\n")
            .expect("valid");
        assert_eq!(file.place(&["max_runs"]), "/etc/cam.toml:1");
        assert_eq!(file.place(&["agents", "work"]), "/etc/cam.toml:3");
        assert_eq!(file.place(&["agents", "work", "args"]), "/etc/cam.toml:5");
    }

    /// An absolute path on the OS the tests run on.
    fn absolute(name: &str) -> String {
        match cfg!(windows) {
            true => format!(r"C:\{name}"),
            false => format!("/{name}"),
        }
    }

    // XDG's paths are Unix's: `/x` is not absolute on Windows.
    #[cfg(unix)]
    #[test]
    fn the_file_is_the_flag_else_cam_config_else_the_xdg_default() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let flag = Some(PathBuf::from("/flag.toml"));
        let all = env(&[
            ("CAM_CONFIG", "/env.toml"),
            ("XDG_CONFIG_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(
            Location::find_for(flag, all, false),
            Location::Explicit("/flag.toml".into())
        );
        assert_eq!(
            Location::find_for(None, all, false),
            Location::Explicit("/env.toml".into())
        );
        assert_eq!(
            Location::find_for(
                None,
                env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]),
                false
            ),
            Location::Default("/x/cli-agent-mcp/config.toml".into())
        );
        assert_eq!(
            Location::find_for(
                None,
                env(&[("XDG_CONFIG_HOME", "rel"), ("HOME", "/h")]),
                false
            ),
            Location::Default("/h/.config/cli-agent-mcp/config.toml".into())
        );
        assert_eq!(Location::find_for(None, env(&[]), false), Location::None);
    }

    #[test]
    fn on_windows_the_default_file_is_under_appdata() {
        let appdata = absolute("a");
        let env = |vars: Vec<(&'static str, String)>| {
            move |name: &str| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.clone())
            }
        };
        let profile = env(vec![("APPDATA", appdata.clone()), ("HOME", absolute("h"))]);
        assert_eq!(
            Location::find_for(None, profile, true),
            Location::Default(
                Path::new(&appdata)
                    .join("cli-agent-mcp")
                    .join("config.toml")
            )
        );
        let explicit = env(vec![
            ("CAM_CONFIG", absolute("env.toml")),
            ("APPDATA", appdata),
        ]);
        assert_eq!(
            Location::find_for(None, explicit, true),
            Location::Explicit(absolute("env.toml").into())
        );
        let relative = env(vec![("APPDATA", "rel".to_owned())]);
        assert_eq!(Location::find_for(None, relative, true), Location::None);
    }

    #[test]
    fn a_missing_default_file_is_fine_and_a_missing_explicit_one_is_an_error() {
        let missing = std::env::temp_dir().join("cam-no-such-dir/config.toml");
        assert!(Location::Default(missing.clone()).read().unwrap().is_none());
        let error = Location::Explicit(missing).read().unwrap_err().to_string();
        assert!(error.contains("cam-no-such-dir"), "{error}");
    }
}
