//! Finding a CLI's binary: an explicit path first, else PATH, else where people install the
//! CLIs (see [`search`] for the places and their order). Found before anything starts, so a
//! missing CLI is refused with the places looked and the setting that fixes it rather than
//! failing a spawn. On Windows a found `.cmd` is also read for the program it starts
//! ([`Start`]).

#[cfg(unix)]
mod login_shell;
mod search;
mod shim;
mod start;
mod windows_dirs;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub use self::search::{
    CliSource, INSTALL_DIRS, LoginPath, Places, Probe, WindowsEnv, node_version, on_path, search,
};
pub use self::shim::{ShimProgram, ShimTarget, resolve as resolve_shim};
pub use self::start::{Start, batch_file_refusal, is_batch, start_of};
pub use self::windows_dirs::WINDOWS_INSTALL_DIRS;
use crate::agent::Agent;
use crate::command_line::CommandLine;
use crate::config::EngineConfig;
use crate::error::{Looked, SetupError};

/// A CLI's binary and where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundCli {
    /// The binary.
    pub path: PathBuf,
    /// How it was found.
    pub source: CliSource,
    /// The dir it was found in, the home written `~`.
    pub dir: String,
    /// How it starts: as found, or (on Windows) as the program its npm shim names, or as a
    /// batch file.
    pub start: Start,
    /// The PATH the CLI starts with, when it was found off the server's PATH.
    search_path: Option<OsString>,
}

impl FoundCli {
    /// Found as given: a configured path, or on the server's PATH.
    fn as_given(path: PathBuf, source: CliSource, places: Places<'_>) -> Self {
        let dir = shown_dir(&path, places.home);
        let start = start_of(&path, places, &RealFs);
        Self {
            path,
            source,
            dir,
            start,
            search_path: None,
        }
    }

    /// `command_line`, built for [`Self::path`], made to start as [`Self::start`] says.
    pub fn start_command(&self, command_line: &mut CommandLine) {
        self.start.apply(command_line);
    }

    /// The PATH the CLI should start with instead of the server's, when it was found
    /// elsewhere: see [`cli_search_path`].
    pub fn search_path(&self) -> Option<&OsStr> {
        self.search_path.as_deref()
    }

    /// "found in ~/.nvm/versions/node/v22.11.0/bin (nvm), not on PATH"; `None` when it is
    /// on PATH or configured.
    pub fn describe(&self) -> Option<String> {
        if self.source.on_path() {
            return None;
        }
        let kind = self
            .source
            .kind()
            .map(|kind| format!(" ({kind})"))
            .unwrap_or_default();
        Some(format!("found in {}{kind}, not on PATH", self.dir))
    }
}

/// The binary to run for `agent`.
pub fn find_cli(agent: Agent, config: &EngineConfig) -> Result<FoundCli, SetupError> {
    // A custom agent without a binary of its own runs its base CLI's.
    let configured = config
        .binaries
        .get(agent.name())
        .or_else(|| config.binaries.get(agent.cli().name()));
    let binary = match configured {
        // A bare name is searched for as a built-in binary is; anything else must exist.
        Some(bin) if bin.components().count() == 1 => bin.as_os_str().to_str(),
        Some(bin) => return explicit(agent, bin),
        None => Some(agent.cli().binary()),
    };
    let looked = match binary {
        Some(binary) => match find_binary(binary, config.login_shell) {
            Ok(found) => return Ok(found),
            Err(looked) => looked,
        },
        None => Vec::new(),
    };
    Err(match configured {
        Some(bin) => configured_missing(agent, bin),
        None => SetupError::CliNotFound {
            agent: agent.name(),
            binary: agent.cli().binary(),
            looked: Box::new(Looked {
                path: std::env::var("PATH").unwrap_or_default(),
                places: looked,
            }),
            package: agent.cli().npm_package(),
            setting: agent.bin_setting(),
        },
    })
}

fn explicit(agent: Agent, bin: &Path) -> Result<FoundCli, SetupError> {
    if RealFs.is_executable(bin) {
        let (home, path, windows) = (home(), server_path(), windows_env());
        let places = Places {
            home: home.as_deref(),
            path: &path,
            login: &LoginPath::Off,
            windows: windows.as_ref(),
        };
        return Ok(FoundCli::as_given(
            bin.to_path_buf(),
            CliSource::Configured,
            places,
        ));
    }
    Err(configured_missing(agent, bin))
}

fn configured_missing(agent: Agent, bin: &Path) -> SetupError {
    SetupError::ConfiguredCliMissing {
        agent: agent.name(),
        bin: bin.to_path_buf(),
        package: agent.cli().npm_package(),
        setting: agent.bin_setting(),
    }
}

/// `binary` on the server's PATH, else wherever [`search`] finds it, asking the login shell
/// (once per process) only then and only when `login_shell`; or the places looked.
fn find_binary(binary: &str, login_shell: bool) -> Result<FoundCli, Vec<String>> {
    let (home, path, windows) = (home(), server_path(), windows_env());
    let mut places = Places {
        home: home.as_deref(),
        path: &path,
        login: &LoginPath::Off,
        windows: windows.as_ref(),
    };
    // The PATH alone first: the login shell is asked only for a CLI that is not on it.
    if let Some(found) = on_path(binary, places, &RealFs) {
        return Ok(FoundCli::as_given(found, CliSource::Path, places));
    }
    let login = login_path(login_shell);
    places.login = &login;
    let (found, source) = search(binary, places, &RealFs)?;
    let dir = shown_dir(&found, places.home);
    let search_path = found
        .parent()
        .and_then(|dir| cli_search_path(dir, &path, &login));
    let start = start_of(&found, places, &RealFs);
    let found = FoundCli {
        path: found,
        source,
        dir,
        start,
        search_path,
    };
    tracing::debug!(binary, path = %found.path.display(), found_by = %found.source, "found off PATH");
    Ok(found)
}

/// The PATH for a CLI found in `dir` off the server's PATH: `dir` first, so a launcher's
/// `#!/usr/bin/env node` finds the node it was installed with (nvm, volta and bun keep theirs
/// there), then the server's PATH, then the login shell's other dirs, for the tools the CLI
/// runs. `None` when they cannot be joined (a dir holding `:`).
pub fn cli_search_path(dir: &Path, path: &OsStr, login: &LoginPath) -> Option<OsString> {
    let mut dirs = vec![dir.to_path_buf()];
    let login = match login {
        LoginPath::Known(login) => Some(login.as_os_str()),
        _ => None,
    };
    for dir in [Some(path), login]
        .into_iter()
        .flatten()
        .flat_map(std::env::split_paths)
    {
        if !dir.as_os_str().is_empty() && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    std::env::join_paths(dirs).ok()
}

/// The login shell's PATH when `asked` (once per process); there is none on Windows.
fn login_path(asked: bool) -> LoginPath {
    #[cfg(unix)]
    if asked {
        return login_shell::cached().map_or(LoginPath::NoAnswer, LoginPath::Known);
    }
    #[cfg(not(unix))]
    let _ = asked;
    LoginPath::Off
}

fn server_path() -> OsString {
    std::env::var_os("PATH").unwrap_or_default()
}

/// PATHEXT and the installers' variables, on Windows only.
fn windows_env() -> Option<WindowsEnv> {
    cfg!(windows).then(WindowsEnv::current)
}

/// `$HOME` (`%USERPROFILE%` on Windows), when set and absolute.
fn home() -> Option<PathBuf> {
    let name = match cfg!(windows) {
        true => "USERPROFILE",
        false => "HOME",
    };
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|home| home.is_absolute())
}

fn shown_dir(path: &Path, home: Option<&Path>) -> String {
    let dir = path.parent().unwrap_or(path);
    match home {
        Some(home) => search::tilde(dir, home),
        None => dir.display().to_string(),
    }
}

/// The filesystem as it is.
pub struct RealFs;

impl Probe for RealFs {
    fn is_executable(&self, path: &Path) -> bool {
        is_executable(path)
    }

    fn entries(&self, dir: &Path) -> Vec<OsString> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|entry| Some(entry.ok()?.file_name()))
            .collect()
    }

    fn read(&self, file: &Path) -> Option<String> {
        std::fs::read_to_string(file).ok()
    }
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// On Windows a file is run by its extension, which PATHEXT already chose.
#[cfg(windows)]
fn is_executable(path: &Path) -> bool {
    path.metadata().is_ok_and(|meta| meta.is_file())
}

#[cfg(all(test, unix))]
mod tests;
#[cfg(test)]
mod windows_tests;
