//! Where the store lives and how much it keeps: its settings, as the config resolved them.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::StoreError;

/// The database file inside the state directory.
pub const DB_FILE: &str = "jobs.sqlite3";
/// The variables of the store's settings; the config file's keys stand behind them.
pub const STATE_DIR_VAR: &str = "CAM_STATE_DIR";
pub const RETENTION_DAYS_VAR: &str = "CAM_JOB_RETENTION_DAYS";
pub const TRANSCRIPT_MAX_BYTES_VAR: &str = "CAM_TRANSCRIPT_MAX_BYTES";
const DEFAULT_RETENTION_DAYS: u64 = 7;
pub(super) const DEFAULT_TRANSCRIPT_MAX_BYTES: u64 = 2 * 1024 * 1024;

/// The store's settings, each from its variable or else the config file (see `config`), kept
/// as given: a bad value fails only the commands that open the store, naming its variable.
#[derive(Clone, Debug, Default)]
pub struct StoreSettings {
    state_dir: Option<OsString>,
    retention_days: Option<OsString>,
    transcript_max_bytes: Option<OsString>,
}

impl StoreSettings {
    /// The settings from their values, looked up by variable name; an empty value is unset.
    pub fn from_values(value: impl Fn(&str) -> Option<OsString>) -> Self {
        let set = |name| value(name).filter(|value| !value.is_empty());
        Self {
            state_dir: set(STATE_DIR_VAR),
            retention_days: set(RETENTION_DAYS_VAR),
            transcript_max_bytes: set(TRANSCRIPT_MAX_BYTES_VAR),
        }
    }

    /// `CAM_STATE_DIR`, else `$XDG_STATE_HOME/cli-agent-mcp`, else
    /// `~/.local/state/cli-agent-mcp`; on Windows `CAM_STATE_DIR`, else
    /// `%LOCALAPPDATA%\cli-agent-mcp` (the user's profile, not roamed).
    pub fn dir(&self) -> Result<PathBuf, StoreError> {
        let env = |name: &str| std::env::var_os(name);
        state_dir_from(self.state_dir.as_deref(), env, cfg!(windows))
    }

    /// How long finished jobs are kept: `CAM_JOB_RETENTION_DAYS` (default 7).
    pub fn retention(&self) -> Result<Duration, StoreError> {
        let days = number(
            RETENTION_DAYS_VAR,
            self.retention_days.as_deref(),
            DEFAULT_RETENTION_DAYS,
            "a whole number of days",
        )?;
        Ok(Duration::from_secs(days.saturating_mul(24 * 3600)))
    }

    /// The most of a job's events kept: `CAM_TRANSCRIPT_MAX_BYTES` (default 2 MiB).
    pub fn transcript_max_bytes(&self) -> Result<u64, StoreError> {
        number(
            TRANSCRIPT_MAX_BYTES_VAR,
            self.transcript_max_bytes.as_deref(),
            DEFAULT_TRANSCRIPT_MAX_BYTES,
            "a whole number of bytes",
        )
    }
}

fn state_dir_from(
    configured: Option<&OsStr>,
    env: impl Fn(&str) -> Option<OsString>,
    windows: bool,
) -> Result<PathBuf, StoreError> {
    if let Some(dir) = configured {
        return Ok(PathBuf::from(dir));
    }
    let var = |name| env(name).filter(|value| !value.is_empty());
    if windows {
        let local = var("LOCALAPPDATA").map(PathBuf::from);
        let local = local.filter(|local| local.is_absolute());
        return Ok(local
            .ok_or(StoreError::NoLocalAppData)?
            .join("cli-agent-mcp"));
    }
    // The XDG spec says a relative path there is invalid and to be ignored.
    let base = match var("XDG_STATE_HOME").map(PathBuf::from) {
        Some(state) if state.is_absolute() => state,
        _ => Path::new(&var("HOME").ok_or(StoreError::NoStateDir)?).join(".local/state"),
    };
    Ok(base.join("cli-agent-mcp"))
}

fn number(
    name: &'static str,
    value: Option<&OsStr>,
    default: u64,
    expected: &'static str,
) -> Result<u64, StoreError> {
    let Some(value) = value else {
        return Ok(default);
    };
    let text = value.to_string_lossy();
    text.trim().parse().map_err(|_| StoreError::BadSetting {
        name,
        value: text.into_owned(),
        expected,
    })
}

/// Creates `dir` and its missing parents, readable by this user only (jobs hold prompts and
/// answers): mode 0700, on Windows a DACL of the user's and SYSTEM's alone, not inherited from
/// a parent that may allow others (a `CAM_STATE_DIR` outside the profile). An existing
/// directory is left as it is.
pub fn create_private(dir: &Path) -> Result<(), StoreError> {
    let error = |source| StoreError::CreateDir {
        dir: dir.to_owned(),
        source,
    };
    #[cfg(windows)]
    let existed = dir.is_dir();
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.recursive(true).create(dir).map_err(error)?;
    #[cfg(windows)]
    if !existed {
        cli_agent_engine::platform::make_private(dir).map_err(error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(vars: &[(&str, &str)]) -> Result<PathBuf, StoreError> {
        let value = |name: &str| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        };
        state_dir_from(
            StoreSettings::from_values(value).state_dir.as_deref(),
            value,
            false,
        )
    }

    #[test]
    fn on_windows_cam_state_dir_wins_then_local_app_data() {
        fn value<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
            move |name| {
                vars.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| OsString::from(value))
            }
        }
        let absolute = if cfg!(windows) { r"C:\l" } else { "/l" };
        let local = [("LOCALAPPDATA", absolute), ("HOME", "/h")];
        let dir = state_dir_from(None, value(&local), true).unwrap();
        assert_eq!(dir, Path::new(absolute).join("cli-agent-mcp"));
        let configured = state_dir_from(Some(OsStr::new("/s")), value(&local), true).unwrap();
        assert_eq!(configured, Path::new("/s"));
        for vars in [&[("HOME", "/h")][..], &[("LOCALAPPDATA", "rel")][..]] {
            let error = state_dir_from(None, value(vars), true).unwrap_err();
            assert!(matches!(error, StoreError::NoLocalAppData), "{error}");
        }
    }

    // XDG's paths are Unix's: `/x` is not absolute on Windows.
    #[cfg(unix)]
    #[test]
    fn cam_state_dir_wins_then_xdg_state_home_then_home() {
        let all = [
            ("CAM_STATE_DIR", "/s"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(dir(&all).unwrap(), Path::new("/s"));
        assert_eq!(dir(&all[1..]).unwrap(), Path::new("/x/cli-agent-mcp"));
        assert_eq!(
            dir(&all[2..]).unwrap(),
            Path::new("/h/.local/state/cli-agent-mcp")
        );
    }

    #[test]
    fn a_relative_or_empty_setting_is_ignored() {
        let relative = [("XDG_STATE_HOME", "rel"), ("HOME", "/h")];
        let empty = [
            ("CAM_STATE_DIR", ""),
            ("XDG_STATE_HOME", ""),
            ("HOME", "/h"),
        ];
        for vars in [&relative[..], &empty[..]] {
            assert_eq!(
                dir(vars).unwrap(),
                Path::new("/h/.local/state/cli-agent-mcp")
            );
        }
    }

    #[test]
    fn without_home_the_error_names_the_settings() {
        let error = dir(&[]).unwrap_err().to_string();
        assert!(error.contains("CAM_STATE_DIR"), "{error}");
    }

    #[test]
    fn unset_numbers_are_the_defaults_and_a_bad_one_names_its_variable() {
        let settings = |value: &str| {
            let value = OsString::from(value);
            StoreSettings::from_values(|name| {
                (name == TRANSCRIPT_MAX_BYTES_VAR).then(|| value.clone())
            })
        };
        let unset = settings("");
        assert_eq!(unset.transcript_max_bytes().unwrap(), 2 * 1024 * 1024);
        assert_eq!(
            unset.retention().unwrap(),
            Duration::from_secs(7 * 24 * 3600)
        );
        assert_eq!(settings(" 4096 ").transcript_max_bytes().unwrap(), 4096);
        let error = settings("2MB")
            .transcript_max_bytes()
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("CAM_TRANSCRIPT_MAX_BYTES") && error.contains("2MB"),
            "{error}"
        );
    }
}
