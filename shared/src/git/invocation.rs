//! Running the `git` binary the same hardened way every time: none of the repository's hooks,
//! no fsmonitor daemon, no prompts, C locale, our own identity, and none of the caller's
//! `GIT_*` variables that would point git at another repository, index or config.

use std::ffi::{OsStr, OsString};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::error::GitError;

/// Inherited variables that would redirect git away from the repository, index and config we
/// name, or change what its diffs print.
const SCRUBBED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
    "GIT_REPLACE_REF_BASE",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
];

/// Options before every subcommand. Hooks and fsmonitor would run the repository's own code;
/// signing would prompt or fail.
const HARDENING: &[&str] = &[
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "advice.addEmbeddedRepo=false",
    "-c",
    "core.quotePath=false",
    "--no-pager",
];

/// The author and committer of our snapshot commits, whatever the user's config says.
const IDENTITY_NAME: &str = "cli-agent-mcp";
const IDENTITY_EMAIL: &str = "cli-agent-mcp@localhost";

/// How long a command may keep meeting another process's `*.lock` file before we give up.
const LOCK_DEADLINE: Duration = Duration::from_secs(30);

/// The git binary to run, and variables to give every command of it (tests point HOME and the
/// global config away from the real home).
#[derive(Clone, Debug)]
pub struct Git {
    program: PathBuf,
    env: Vec<(OsString, OsString)>,
}

/// A git version, major and minor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32);

impl Git {
    /// The `git` found on PATH.
    pub fn from_path() -> Result<Self, GitError> {
        which::which("git")
            .map(Self::at)
            .map_err(|_| GitError::GitNotFound {
                path: std::env::var("PATH").unwrap_or_default(),
            })
    }

    /// A given git binary.
    pub fn at(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            env: Vec::new(),
        }
    }

    /// Sets a variable for every command this git runs.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The installed version, from `git version`.
    pub fn version(&self, cwd: &Path) -> Result<Version, GitError> {
        let text = self.run(cwd).arg("version").text()?;
        parse_version(&text).ok_or_else(|| GitError::UnexpectedOutput {
            command: "version".into(),
            output: text,
        })
    }

    /// Fails naming `what` unless git is at least `needed`.
    pub(crate) fn require(
        &self,
        cwd: &Path,
        needed: Version,
        what: &'static str,
    ) -> Result<(), GitError> {
        let found = self.version(cwd)?;
        if found >= needed {
            return Ok(());
        }
        Err(GitError::GitTooOld {
            what,
            needed: needed.to_string(),
            found: found.to_string(),
        })
    }

    pub(crate) fn run<'a>(&'a self, cwd: &'a Path) -> Invocation<'a> {
        Invocation {
            git: self,
            cwd,
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            allowed: &[0],
            retry_when_busy: false,
        }
    }
}

/// `git merge-tree --merge-base` came with 2.40.
pub(crate) const MERGE_TREE_BASE: Version = Version(2, 40);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

fn parse_version(text: &str) -> Option<Version> {
    let number = text
        .strip_prefix("git version ")?
        .split_whitespace()
        .next()?;
    let mut parts = number.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some(Version(major, minor))
}

/// One git command being set up.
pub(crate) struct Invocation<'a> {
    git: &'a Git,
    cwd: &'a Path,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    stdin: Option<Vec<u8>>,
    allowed: &'static [i32],
    retry_when_busy: bool,
}

/// A finished command: its exit code (one of the allowed ones) and its stdout.
pub(crate) struct Ran {
    pub code: i32,
    pub stdout: Vec<u8>,
}

impl<'a> Invocation<'a> {
    /// Takes the paths given after `--` as file names, not patterns.
    pub fn literal_paths(mut self) -> Self {
        self.args.insert(0, "--literal-pathspecs".into());
        self
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Self {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// Runs against this index file instead of the repository's own. Our indexes are read
    /// only by us, so git skips checksumming them on write (a full pass over a large index).
    pub fn index(mut self, path: &Path) -> Self {
        self.env.push(("GIT_INDEX_FILE".into(), path.into()));
        self.args
            .splice(0..0, ["-c".into(), "index.skipHash=true".into()]);
        self
    }

    /// Checks files out with one worker per core (git's `checkout.workers=0`) whatever the
    /// user's config says: on a large tree several times faster than one file at a time.
    pub fn parallel_checkout(mut self) -> Self {
        self.args
            .splice(0..0, ["-c".into(), "checkout.workers=0".into()]);
        self
    }

    pub fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.stdin = Some(bytes);
        self
    }

    /// Exit codes that are answers, not failures (e.g. 1 for "conflicts" or "none matched").
    pub fn allow(mut self, codes: &'static [i32]) -> Self {
        self.allowed = codes;
        self
    }

    /// Retries, with growing pauses, while another git process holds a lock file we need or
    /// is half-way through writing a worktree record. Only for commands that leave nothing
    /// behind when they fail.
    pub fn retry_when_busy(mut self) -> Self {
        self.retry_when_busy = true;
        self
    }

    pub fn stdout(self) -> Result<Vec<u8>, GitError> {
        Ok(self.output()?.stdout)
    }

    /// Stdout as text, trailing newline removed.
    pub fn text(self) -> Result<String, GitError> {
        let bytes = self.stdout()?;
        Ok(String::from_utf8_lossy(&bytes).trim_end().to_owned())
    }

    pub fn output(self) -> Result<Ran, GitError> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            match self.once() {
                Err(GitError::Failed { stderr, .. })
                    if self.retry_when_busy
                        && is_busy(&stderr)
                        && started.elapsed() < LOCK_DEADLINE =>
                {
                    std::thread::sleep(pause + jitter(pause));
                    pause = (pause * 2).min(Duration::from_millis(400));
                }
                result => return result,
            }
        }
    }

    fn once(&self) -> Result<Ran, GitError> {
        let mut child = self
            .command()
            .spawn()
            .map_err(|error| self.spawn_error(error))?;
        let input = child.stdin.take();
        // Fed from its own thread: git may fill the stdout pipe before it has read all of it.
        let output = std::thread::scope(|scope| {
            if let Some(mut input) = input {
                let bytes = self.stdin.as_deref().unwrap_or_default();
                // A command that exits early closes its stdin; its exit status tells why.
                scope.spawn(move || drop(input.write_all(bytes)));
            }
            child.wait_with_output()
        })
        .map_err(|error| GitError::io("could not wait for git in", self.cwd, error))?;
        let code = output.status.code().unwrap_or(-1);
        if self.allowed.contains(&code) {
            return Ok(Ran {
                code,
                stdout: output.stdout,
            });
        }
        Err(GitError::Failed {
            command: self.describe(),
            dir: self.cwd.to_owned(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.git.program);
        command
            .current_dir(self.cwd)
            .args(HARDENING)
            .args(&self.args);
        for name in SCRUBBED {
            command.env_remove(name);
        }
        command
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("LC_ALL", "C")
            .env("GIT_AUTHOR_NAME", IDENTITY_NAME)
            .env("GIT_AUTHOR_EMAIL", IDENTITY_EMAIL)
            .env("GIT_COMMITTER_NAME", IDENTITY_NAME)
            .env("GIT_COMMITTER_EMAIL", IDENTITY_EMAIL)
            .envs(self.git.env.iter().map(|(k, v)| (k, v)))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn spawn_error(&self, error: std::io::Error) -> GitError {
        if error.kind() == ErrorKind::NotFound && self.cwd.is_dir() {
            return GitError::GitNotFound {
                path: self.git.program.display().to_string(),
            };
        }
        GitError::io("could not run git in", self.cwd, error)
    }

    fn describe(&self) -> String {
        let words: Vec<_> = self.args.iter().map(|arg| arg.to_string_lossy()).collect();
        words.join(" ")
    }
}

/// Git's words when another process holds `<file>.lock`, or when `git worktree add` reads
/// the record of a worktree another process is still making.
fn is_busy(stderr: &str) -> bool {
    let locked = stderr.contains(".lock") && stderr.contains("File exists");
    let record_half_made = stderr.contains("failed to read") && stderr.contains("/worktrees/");
    locked || record_half_made
}

/// Up to half the pause again, so processes that collided do not retry in step.
fn jitter(pause: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.subsec_nanos())
        .unwrap_or_default();
    let half = pause.as_nanos() as u64 / 2;
    Duration::from_nanos(u64::from(nanos) % half.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_with_vendor_suffixes() {
        assert_eq!(parse_version("git version 2.47.3"), Some(Version(2, 47)));
        assert_eq!(
            parse_version("git version 2.39.5 (Apple Git-154)"),
            Some(Version(2, 39))
        );
        assert_eq!(parse_version("hello"), None);
    }

    #[test]
    fn busy_repositories_are_told_from_other_failures() {
        assert!(is_busy(
            "fatal: Unable to create '/r/.git/index.lock': File exists."
        ));
        assert!(is_busy(
            "fatal: failed to read .git/worktrees/p2/commondir: Success"
        ));
        assert!(!is_busy(
            "fatal: cannot lock ref 'refs/heads/x': reference already exists"
        ));
    }
}
