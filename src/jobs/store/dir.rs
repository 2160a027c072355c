//! Where the store lives and the settings it reads from the environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::StoreError;

/// The database file inside the state directory.
pub const DB_FILE: &str = "jobs.sqlite3";
const DEFAULT_RETENTION_DAYS: u64 = 7;
const DEFAULT_TRANSCRIPT_MAX_BYTES: u64 = 2 * 1024 * 1024;

/// `CAM_STATE_DIR`, else `$XDG_STATE_HOME/cli-agent-mcp`, else `~/.local/state/cli-agent-mcp`.
pub fn state_dir() -> Result<PathBuf, StoreError> {
    state_dir_from(|name| std::env::var_os(name))
}

fn state_dir_from(env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, StoreError> {
    let var = |name| env(name).filter(|value| !value.is_empty());
    if let Some(dir) = var("CAM_STATE_DIR") {
        return Ok(PathBuf::from(dir));
    }
    // The XDG spec says a relative path there is invalid and to be ignored.
    let base = match var("XDG_STATE_HOME").map(PathBuf::from) {
        Some(state) if state.is_absolute() => state,
        _ => Path::new(&var("HOME").ok_or(StoreError::NoStateDir)?).join(".local/state"),
    };
    Ok(base.join("cli-agent-mcp"))
}

/// How long finished jobs are kept: `CAM_JOB_RETENTION_DAYS` (default 7).
pub fn retention() -> Result<Duration, StoreError> {
    let days = setting(
        "CAM_JOB_RETENTION_DAYS",
        DEFAULT_RETENTION_DAYS,
        "a whole number of days",
    )?;
    Ok(Duration::from_secs(days.saturating_mul(24 * 3600)))
}

/// The most of a job's events kept: `CAM_TRANSCRIPT_MAX_BYTES` (default 2 MiB).
pub fn transcript_max_bytes() -> Result<u64, StoreError> {
    setting(
        "CAM_TRANSCRIPT_MAX_BYTES",
        DEFAULT_TRANSCRIPT_MAX_BYTES,
        "a whole number of bytes",
    )
}

fn setting(name: &'static str, default: u64, expected: &'static str) -> Result<u64, StoreError> {
    match std::env::var(name) {
        Err(std::env::VarError::NotPresent) => Ok(default),
        Ok(value) if value.trim().is_empty() => Ok(default),
        Ok(value) => value.trim().parse().map_err(|_| StoreError::BadSetting {
            name,
            value,
            expected,
        }),
        Err(std::env::VarError::NotUnicode(value)) => Err(StoreError::BadSetting {
            name,
            value: value.to_string_lossy().into_owned(),
            expected,
        }),
    }
}

/// Creates `dir` and its missing parents, readable by this user only (jobs hold prompts and
/// answers). An existing directory is left as it is.
pub fn create_private(dir: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| StoreError::CreateDir {
            dir: dir.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(vars: &[(&str, &str)]) -> Result<PathBuf, StoreError> {
        state_dir_from(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        })
    }

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
}
