//! Where Windows installers put the CLIs, the twins of the Unix places: nvm-windows' active
//! node, then [`WINDOWS_INSTALL_DIRS`] in their order (the search puts nvm-windows' other
//! node versions and the npm prefix of `%USERPROFILE%\.npmrc` between them). Each dir is under a variable (`%APPDATA%\npm`), so
//! one not set is passed over and said so. Plain paths, tested on any machine.

use std::path::{Path, PathBuf};

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

/// Where nvm-windows keeps its node versions, each a dir (`v22.11.0`) holding its node and the
/// global CLIs installed with it.
pub(super) const NVM_HOME: &str = "NVM_HOME";

/// The variables the dirs are under, each once.
pub(super) fn variables() -> impl Iterator<Item = &'static str> {
    let mut names: Vec<&str> = std::iter::once(NVM_SYMLINK)
        .chain(WINDOWS_INSTALL_DIRS.iter().copied())
        .filter_map(|dir| Some(split(dir)?.0))
        .chain([NVM_HOME])
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

/// nvm-windows' link, then [`WINDOWS_INSTALL_DIRS`], each as written with its path: `None`
/// when its variable (read through `var`) is not set.
pub(super) fn dirs<'a>(
    var: impl Fn(&str) -> Option<&'a Path>,
) -> impl Iterator<Item = (&'static str, Option<PathBuf>)> {
    std::iter::once(NVM_SYMLINK)
        .chain(WINDOWS_INSTALL_DIRS.iter().copied())
        .map(move |dir| (dir, expand(dir, &var)))
}

/// How a dir whose variable is not set is named in a report.
pub(super) fn not_set(dir: &'static str) -> String {
    let name = split(dir).map_or(dir, |(name, _)| name);
    format!("{dir} ({name} is not set)")
}

/// `dir` with its variable's value; `None` when it is not set.
fn expand<'a>(dir: &'static str, var: impl Fn(&str) -> Option<&'a Path>) -> Option<PathBuf> {
    let (name, parts) = split(dir)?;
    let mut path = var(name)?.to_path_buf();
    path.extend(parts);
    Some(path)
}
