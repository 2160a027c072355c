//! What can go wrong with git, each message saying what happened and how to fix it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error(
        "git was not found on PATH ({path}): install git (2.40 or newer) or put its directory on PATH"
    )]
    GitNotFound { path: String },

    #[error(
        "{what} needs git {needed} or newer, and the installed git is {found}: upgrade git \
         (https://git-scm.com/downloads)"
    )]
    GitTooOld {
        what: &'static str,
        needed: String,
        found: String,
    },

    #[error("{} is not an existing directory: pass the path of a directory that exists", .0.display())]
    NotADirectory(PathBuf),

    #[error(
        "{} is a bare git repository, which has no working tree to run in or measure: pass a \
         directory of a checkout of it (e.g. one made by `git worktree add`)",
        .0.display()
    )]
    BareRepository(PathBuf),

    #[error(
        "{} is inside a git directory (.git), not a working tree: pass a directory of the checkout",
        .0.display()
    )]
    InsideGitDir(PathBuf),

    #[error(
        "the repository at {} is in the middle of a {operation}: finish it (`git {operation} \
         --continue`) or abort it (`git {operation} --abort`), then try again",
        .top.display()
    )]
    OperationInProgress { top: PathBuf, operation: Operation },

    #[error(
        "`{0}` cannot name a job's git refs: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`"
    )]
    BadName(String),

    #[error(
        "{} already exists, so no worktree can be made there: remove it, or discard the job that \
         made it",
        .0.display()
    )]
    WorktreePathExists(PathBuf),

    #[error(
        "branch {0} already exists: a job with this id made it before; discard that job (or delete \
         the branch with `git branch -D {0}`), then try again"
    )]
    BranchExists(String),

    #[error(
        "branch {0} does not exist: the job's worktree was discarded, or the branch deleted by hand"
    )]
    NoBranch(String),

    #[error(
        "cannot {operation}: {} conflict with the workspace (edited there since, or an \
         untracked or ignored file is in the way); the workspace was left exactly as it was. \
         Commit, stash, move or undo those, or bring the change over by hand from the job's \
         diff, then try again",
        .files.join(", ")
    )]
    Conflicts {
        operation: &'static str,
        files: Vec<String>,
    },

    #[error(
        "{source}; restoring the workspace failed as well ({restore}): recover the files with \
         `git restore --source={snapshot} --worktree -- {}`",
        .paths.join(" ")
    )]
    RestoreFailed {
        source: Box<GitError>,
        restore: Box<GitError>,
        snapshot: String,
        paths: Vec<String>,
    },

    #[error("git {command} failed in {} ({status}): {stderr}", .dir.display())]
    Failed {
        command: String,
        dir: PathBuf,
        status: String,
        stderr: String,
    },

    #[error("unexpected output from git {command}: {output:?}")]
    UnexpectedOutput { command: String, output: String },

    #[error("{what} {}: {source}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

impl GitError {
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            what,
            path: path.into(),
            source,
        }
    }
}

/// A multi-step git operation that leaves the repository half-way until the user ends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Merge,
    Rebase,
    CherryPick,
    Revert,
    Am,
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Merge => "merge",
            Self::Rebase => "rebase",
            Self::CherryPick => "cherry-pick",
            Self::Revert => "revert",
            Self::Am => "am",
        })
    }
}
