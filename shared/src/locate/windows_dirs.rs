//! Where Windows installers put the CLIs, the twins of the Unix places: nvm-windows' active
//! node, the npm prefix of `%USERPROFILE%\.npmrc`, then [`WINDOWS_INSTALL_DIRS`] in their
//! order. Each dir is under a variable (`%APPDATA%\npm`), so one not set is passed over and
//! said so. Plain paths, tested on any machine with a [`WindowsEnv`] of temp dirs.

use std::path::PathBuf;

use super::search::{Candidate, CliSource, Places, Probe, WindowsEnv, npmrc_prefix, path_dirs};

/// Where Windows installers put the CLIs, after nvm-windows and `.npmrc`'s prefix, in this
/// order; each starts with the variable it is under.
pub const WINDOWS_INSTALL_DIRS: &[&str] = &[
    r"%VOLTA_HOME%\bin",
    r"%LOCALAPPDATA%\Volta\bin",
    // npm's global prefix by default: its `.cmd` shims and the packages beside them.
    r"%APPDATA%\npm",
    // Claude Code's native installer, and pipx and uv's tools.
    r"%USERPROFILE%\.local\bin",
    r"%USERPROFILE%\.bun\bin",
    r"%USERPROFILE%\.claude\local",
    r"%SCOOP%\shims",
    r"%USERPROFILE%\scoop\shims",
    r"%ChocolateyInstall%\bin",
    r"%LOCALAPPDATA%\Microsoft\WinGet\Links",
    r"%LOCALAPPDATA%\pnpm",
    r"%LOCALAPPDATA%\Yarn\bin",
    r"%LOCALAPPDATA%\mise\shims",
];

/// nvm-windows' link to the node version in use, where its global CLIs are too.
const NVM_SYMLINK: &str = "%NVM_SYMLINK%";

/// The variables the dirs are under, each once.
pub(super) fn variables() -> impl Iterator<Item = &'static str> {
    let mut names: Vec<&str> = std::iter::once(NVM_SYMLINK)
        .chain(WINDOWS_INSTALL_DIRS.iter().copied())
        .filter_map(|dir| Some(split(dir)?.0))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter()
}

/// `%NAME%\rest` as the variable's name and the rest's parts.
fn split(dir: &'static str) -> Option<(&'static str, Vec<&'static str>)> {
    let (name, rest) = dir.strip_prefix('%')?.split_once('%')?;
    let parts = rest.split('\\').filter(|part| !part.is_empty()).collect();
    Some((name, parts))
}

/// Every dir to look in on Windows, in order, and how each is named in a report.
pub(super) fn candidates(
    places: Places<'_>,
    windows: &WindowsEnv,
    probe: &dyn Probe,
) -> (Vec<Candidate>, Vec<String>) {
    let mut found = path_dirs(places.path, CliSource::Path);
    let mut looked = Vec::new();
    add(NVM_SYMLINK, windows, &mut found, &mut looked);
    if let Some(prefix) = places.home.and_then(|home| npmrc_prefix(home, probe)) {
        looked.push(format!(
            "{} (the npm prefix of %USERPROFILE%\\.npmrc)",
            prefix.display()
        ));
        found.push(Candidate {
            dir: prefix,
            source: CliSource::NpmrcPrefix,
        });
    }
    for &dir in WINDOWS_INSTALL_DIRS {
        add(dir, windows, &mut found, &mut looked);
    }
    (found, looked)
}

/// `dir` as a candidate when its variable is set; said either way.
fn add(
    dir: &'static str,
    windows: &WindowsEnv,
    found: &mut Vec<Candidate>,
    looked: &mut Vec<String>,
) {
    match expand(dir, windows) {
        Some(path) => {
            found.push(Candidate {
                dir: path,
                source: CliSource::Dir(dir),
            });
            looked.push(dir.to_owned());
        }
        None => {
            let name = split(dir).map_or(dir, |(name, _)| name);
            looked.push(format!("{dir} ({name} is not set)"));
        }
    }
}

/// `dir` with its variable's value; `None` when it is not set.
fn expand(dir: &'static str, windows: &WindowsEnv) -> Option<PathBuf> {
    let (name, parts) = split(dir)?;
    let mut path = windows.var(name)?.to_path_buf();
    path.extend(parts);
    Some(path)
}
