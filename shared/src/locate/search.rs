//! Where a CLI is looked for, and in which order: a pure search over a home, a PATH, the
//! login shell's PATH and a [`Probe`] of the filesystem, so it is tested with temp dirs.
//!
//! The order: the server's PATH; the login shell's PATH; nvm's node versions, newest first;
//! the npm prefix of `~/.npmrc`; then [`INSTALL_DIRS`] in their order. The first place that
//! has an executable of the name wins.
//!
//! On Windows ([`Places::windows`]) a name is tried with each of PATHEXT's extensions, there
//! is no login shell to ask, and the places are the Windows installers' ones (see
//! [`super::windows_dirs`]).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

use super::windows_dirs;

/// Where installers put the CLIs, tried in this order after nvm and `~/.npmrc`'s prefix. A
/// leading `~/` is the home.
pub const INSTALL_DIRS: &[&str] = &[
    "~/.volta/bin",
    "~/.npm-global/bin",
    "~/.local/bin",
    "~/.bun/bin",
    "~/.claude/local",
    "~/.opencode/bin",
    "/opt/homebrew/bin",
    "/usr/local/bin",
    "/home/linuxbrew/.linuxbrew/bin",
    "~/.local/share/pnpm",
    "~/Library/pnpm",
    "~/.yarn/bin",
    "~/.asdf/shims",
    "~/.local/share/mise/shims",
];

/// nvm's node versions, each with a `bin` of its own.
const NVM_VERSIONS: &str = ".nvm/versions/node";

/// What the search reads of the filesystem.
pub trait Probe {
    /// A regular file (after symlinks) that may be executed.
    fn is_executable(&self, path: &Path) -> bool;
    /// The names in `dir`; none when it cannot be read.
    fn entries(&self, dir: &Path) -> Vec<OsString>;
    /// The text of `file`, when it can be read.
    fn read(&self, file: &Path) -> Option<String>;
}

/// Where a CLI's binary was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CliSource {
    /// The path given by `CAM_<CLI>_BIN`, `--<cli>-bin` or the config file.
    Configured,
    /// The server's own PATH.
    Path,
    /// The PATH the user's login shell sets up.
    LoginShell,
    /// The `bin` of nvm's node `version` (`v22.11.0`).
    Nvm {
        /// The node version's directory name.
        version: String,
    },
    /// The `bin` of the npm prefix set in `~/.npmrc`.
    NpmrcPrefix,
    /// One of [`INSTALL_DIRS`] (on Windows [`super::WINDOWS_INSTALL_DIRS`] or nvm-windows'
    /// `%NVM_SYMLINK%`), as written there.
    Dir(&'static str),
}

impl CliSource {
    /// Found where the server's own PATH or a setting says, so nothing was searched for.
    pub fn on_path(&self) -> bool {
        matches!(self, Self::Configured | Self::Path)
    }

    /// A word on the place, beside its dir: none for an install dir, which is its own name.
    pub fn kind(&self) -> Option<&'static str> {
        match self {
            Self::Configured => Some("configured"),
            Self::Path => Some("PATH"),
            Self::LoginShell => Some("login shell PATH"),
            Self::Nvm { .. } => Some("nvm"),
            Self::NpmrcPrefix if cfg!(windows) => Some("npm prefix of %USERPROFILE%\\.npmrc"),
            Self::NpmrcPrefix => Some("npm prefix of ~/.npmrc"),
            Self::Dir(_) => None,
        }
    }
}

impl fmt::Display for CliSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nvm { version } => write!(f, "nvm node {version}"),
            Self::Dir(dir) => f.write_str(dir),
            other => f.write_str(other.kind().unwrap_or_default()),
        }
    }
}

/// The login shell's PATH, as far as it is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginPath {
    /// Not asked: turned off (`--no-login-shell`, `CAM_NO_LOGIN_SHELL`).
    Off,
    /// Asked, and no PATH came back (no shell, a failure, or out of time).
    NoAnswer,
    /// The PATH it set up.
    Known(OsString),
}

/// What the search starts from.
#[derive(Clone, Copy, Debug)]
pub struct Places<'a> {
    /// `$HOME` (`%USERPROFILE%` on Windows); without one, the dirs under it are not searched.
    pub home: Option<&'a Path>,
    /// The server's own PATH.
    pub path: &'a OsStr,
    /// The login shell's PATH, as far as it was asked for.
    pub login: &'a LoginPath,
    /// Windows' extensions and variables, when the search is Windows': `None` on Unix.
    pub windows: Option<&'a WindowsEnv>,
}

/// A dir to look in, and what it is.
struct Candidate {
    dir: PathBuf,
    source: CliSource,
}

/// What a Windows search reads of the environment, read once (see [`WindowsEnv::current`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WindowsEnv {
    /// PATHEXT's extensions, lower case (`.exe`, `.cmd`): the names a bare name may take.
    pub extensions: Vec<String>,
    /// The variables the install dirs are under (`APPDATA`, `SCOOP`, …), as set.
    pub vars: Vec<(String, PathBuf)>,
}

impl WindowsEnv {
    /// PATHEXT as Windows' own default has it, for a server started without one.
    const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

    /// From `var`, the environment: PATHEXT and the variables [`super::WINDOWS_INSTALL_DIRS`]
    /// name, those that are absolute paths.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Self {
        let pathext = var("PATHEXT")
            .and_then(|value| value.into_string().ok())
            .filter(|value| !value.trim().is_empty())
            .unwrap_or_else(|| Self::DEFAULT_PATHEXT.to_owned());
        let extensions = pathext
            .split(';')
            .filter(|ext| ext.starts_with('.') && ext.len() > 1)
            .map(str::to_ascii_lowercase)
            .collect();
        let vars = windows_dirs::variables()
            .filter_map(|name| {
                let value = PathBuf::from(var(name)?);
                value.is_absolute().then(|| (name.to_owned(), value))
            })
            .collect();
        Self { extensions, vars }
    }

    /// The server's own environment.
    pub fn current() -> Self {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// The value of `name`, when set.
    fn var(&self, name: &str) -> Option<&Path> {
        self.vars
            .iter()
            .find(|(set, _)| set.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_path())
    }
}

/// The file names `binary` may have: itself on Unix; on Windows itself when it already ends
/// in one of PATHEXT's extensions, else itself with each of them, in PATHEXT's order (so
/// `codex` is `codex.exe` before `codex.cmd`, and npm's extensionless `sh` script beside the
/// `.cmd` never counts).
fn file_names(binary: &str, windows: Option<&WindowsEnv>) -> Vec<String> {
    let Some(windows) = windows else {
        return vec![binary.to_owned()];
    };
    let lower = binary.to_ascii_lowercase();
    if windows
        .extensions
        .iter()
        .any(|ext| lower.ends_with(ext.as_str()))
    {
        return vec![binary.to_owned()];
    }
    windows
        .extensions
        .iter()
        .map(|ext| format!("{binary}{ext}"))
        .collect()
}

/// `binary`'s path and where it was found, or the places looked (the server's PATH aside),
/// each as a person would write it.
pub fn search(
    binary: &str,
    places: Places<'_>,
    probe: &dyn Probe,
) -> Result<(PathBuf, CliSource), Vec<String>> {
    let (candidates, looked) = match places.windows {
        Some(windows) => windows_candidates(places, windows, probe),
        None => candidates(places, probe),
    };
    first_executable(binary, places.windows, candidates, probe).ok_or(looked)
}

/// `binary` in an absolute dir of the server's PATH.
pub fn on_path(binary: &str, places: Places<'_>, probe: &dyn Probe) -> Option<PathBuf> {
    let candidates = path_dirs(places.path, CliSource::Path);
    first_executable(binary, places.windows, candidates, probe).map(|(path, _)| path)
}

/// The first of `binary`'s names in the first of `candidates` that holds it.
fn first_executable(
    binary: &str,
    windows: Option<&WindowsEnv>,
    candidates: Vec<Candidate>,
    probe: &dyn Probe,
) -> Option<(PathBuf, CliSource)> {
    let names = file_names(binary, windows);
    candidates.into_iter().find_map(|candidate| {
        let path = names
            .iter()
            .map(|name| candidate.dir.join(name))
            .find(|path| probe.is_executable(path))?;
        Some((path, candidate.source))
    })
}

/// Every dir to look in, in order, and how each place is named in a report.
fn candidates(places: Places<'_>, probe: &dyn Probe) -> (Vec<Candidate>, Vec<String>) {
    let mut found = path_dirs(places.path, CliSource::Path);
    let mut looked = vec![match places.login {
        LoginPath::Known(path) => {
            found.extend(path_dirs(path, CliSource::LoginShell));
            "the login shell's PATH".to_owned()
        }
        LoginPath::NoAnswer => "the login shell's PATH (it gave none)".to_owned(),
        LoginPath::Off => "the login shell's PATH (not asked: CAM_NO_LOGIN_SHELL)".to_owned(),
    }];
    let Some(home) = places.home else {
        looked.push("no dir under ~ (HOME is not set)".to_owned());
        let absolute = INSTALL_DIRS.iter().filter(|dir| dir.starts_with('/'));
        for &dir in absolute {
            found.push(install_dir(dir, Path::new(dir)));
            looked.push(dir.to_owned());
        }
        return (found, looked);
    };
    found.extend(node_versions(&home.join(NVM_VERSIONS), Some("bin"), probe));
    looked.push(format!("~/{NVM_VERSIONS}/*/bin"));
    if let Some(prefix) = npmrc_prefix(home, probe).map(|prefix| prefix.join("bin")) {
        looked.push(format!(
            "{} (the npm prefix of ~/.npmrc)",
            tilde(&prefix, home)
        ));
        found.push(Candidate {
            dir: prefix,
            source: CliSource::NpmrcPrefix,
        });
    }
    for &dir in INSTALL_DIRS {
        let path = match dir.strip_prefix("~/") {
            Some(relative) => home.join(relative),
            None => PathBuf::from(dir),
        };
        found.push(install_dir(dir, &path));
        looked.push(dir.to_owned());
    }
    (found, looked)
}

/// Every dir to look in on Windows, in order, and how each is named in a report: the PATH,
/// nvm-windows' node, the npm prefix of `%USERPROFILE%\.npmrc`, then the installers' dirs.
fn windows_candidates(
    places: Places<'_>,
    windows: &WindowsEnv,
    probe: &dyn Probe,
) -> (Vec<Candidate>, Vec<String>) {
    let mut found = path_dirs(places.path, CliSource::Path);
    let mut looked = Vec::new();
    let mut prefix = places.home.and_then(|home| npmrc_prefix(home, probe));
    let mut nvm_home = windows.var(windows_dirs::NVM_HOME);
    for (dir, path) in windows_dirs::dirs(|name| windows.var(name)) {
        match path {
            Some(path) => {
                found.push(install_dir(dir, &path));
                looked.push(dir.to_owned());
            }
            None => looked.push(windows_dirs::not_set(dir)),
        }
        // Right after nvm-windows' node: its other versions, newest first, as nvm's on Unix.
        if let Some(versions) = nvm_home.take() {
            looked.push(format!(r"%{}%\*", windows_dirs::NVM_HOME));
            found.extend(node_versions(versions, None, probe));
        }
        // Then the npm prefix, as on Unix after nvm's.
        if let Some(prefix) = prefix.take() {
            let npmrc = "the npm prefix of %USERPROFILE%\\.npmrc";
            looked.push(format!("{} ({npmrc})", prefix.display()));
            found.push(Candidate {
                dir: prefix,
                source: CliSource::NpmrcPrefix,
            });
        }
    }
    (found, looked)
}

fn install_dir(name: &'static str, dir: &Path) -> Candidate {
    Candidate {
        dir: dir.to_owned(),
        source: CliSource::Dir(name),
    }
}

/// The absolute dirs of a PATH; an empty or relative entry would search the working dir.
fn path_dirs(path: &OsStr, source: CliSource) -> Vec<Candidate> {
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| Candidate {
            dir,
            source: source.clone(),
        })
        .collect()
}

/// The dir of each node version under `versions` (or its `bin`), newest first: nvm's
/// `~/.nvm/versions/node/<version>/bin`, nvm-windows' `%NVM_HOME%\<version>`.
fn node_versions(versions: &Path, bin: Option<&str>, probe: &dyn Probe) -> Vec<Candidate> {
    let mut found: Vec<_> = probe
        .entries(versions)
        .into_iter()
        .filter_map(|name| {
            let name = name.into_string().ok()?;
            Some((node_version(&name)?, name))
        })
        .collect();
    found.sort_by(|(a, _), (b, _)| b.cmp(a));
    found
        .into_iter()
        .map(|(_, version)| {
            let dir = versions.join(&version);
            let dir = match bin {
                Some(bin) => dir.join(bin),
                None => dir,
            };
            Candidate {
                dir,
                source: CliSource::Nvm { version },
            }
        })
        .collect()
}

/// `v22.11.0` (or `22.11.0`) as numbers, to order by; `None` for a name that is no version.
/// A suffix after the patch number (`-rc.1`) is ignored.
pub fn node_version(name: &str) -> Option<(u64, u64, u64)> {
    let mut parts = name.strip_prefix('v').unwrap_or(name).splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next()?;
    let digits = patch
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(patch.len());
    Some((major, minor, patch[..digits].parse().ok()?))
}

/// The `prefix=` that `~/.npmrc` sets (`npm config set prefix`), when absolute once `~` and
/// `$HOME` are expanded. npm puts its CLIs in the prefix's `bin` on Unix, in the prefix itself
/// on Windows.
fn npmrc_prefix(home: &Path, probe: &dyn Probe) -> Option<PathBuf> {
    let text = probe.read(&home.join(".npmrc"))?;
    let value = text.lines().rev().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "prefix").then(|| value.trim().trim_matches(['"', '\'']))
    })?;
    let home_text = home.to_str()?;
    let expanded = match value.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{home_text}{rest}"),
        _ => value
            .replace("${HOME}", home_text)
            .replace("$HOME", home_text),
    };
    let prefix = PathBuf::from(expanded);
    prefix.is_absolute().then_some(prefix)
}

/// `path` with the home written `~` (`%USERPROFILE%` on Windows), as a person reads it.
pub fn tilde(path: &Path, home: &Path) -> String {
    let (name, separator) = match cfg!(windows) {
        true => ("%USERPROFILE%", '\\'),
        false => ("~", '/'),
    };
    match path.strip_prefix(home) {
        Ok(rest) if rest.as_os_str().is_empty() => name.to_owned(),
        Ok(rest) => format!("{name}{separator}{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}
