//! What can go wrong with git, each message saying what happened and how to fix it.

use std::path::PathBuf;

/// Why a git operation failed; the message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No `git` on PATH.
    #[error(
        "git was not found on PATH ({path}): install git (2.40 or newer) or put its directory on PATH"
    )]
    GitNotFound {
        /// The PATH it was looked for on.
        path: String,
    },

    /// The installed git is older than an operation needs.
    #[error(
        "{what} needs git {needed} or newer, and the installed git is {found}: upgrade git \
         (https://git-scm.com/downloads)"
    )]
    GitTooOld {
        /// The operation.
        what: &'static str,
        /// The version it needs.
        needed: String,
        /// The version installed.
        found: String,
    },

    /// The workspace is not a directory.
    #[error("{} is not an existing directory: pass the path of a directory that exists", .0.display())]
    NotADirectory(PathBuf),

    /// The workspace is a bare repository, with no working tree.
    #[error(
        "{} is a bare git repository, which has no working tree to run in or measure: pass a \
         directory of a checkout of it (e.g. one made by `git worktree add`)",
        .0.display()
    )]
    BareRepository(PathBuf),

    /// The workspace is inside a `.git` directory.
    #[error(
        "{} is inside a git directory (.git), not a working tree: pass a directory of the checkout",
        .0.display()
    )]
    InsideGitDir(PathBuf),

    /// The repository is half-way through a merge, rebase or the like.
    #[error(
        "the repository at {} is in the middle of a {operation}: finish it (`git {operation} \
         --continue`) or abort it (`git {operation} --abort`), then try again",
        .top.display()
    )]
    OperationInProgress {
        /// The repository's top level.
        top: PathBuf,
        /// What it is in the middle of.
        operation: Operation,
    },

    /// A job key that cannot name git refs.
    #[error(
        "`{0}` cannot name a job's git refs: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`"
    )]
    BadName(String),

    /// Something is already where a job's worktree would go.
    #[error(
        "{} already exists, so no worktree can be made there: remove it, or discard the job that \
         made it",
        .0.display()
    )]
    WorktreePathExists(PathBuf),

    /// A job's branch exists already.
    #[error(
        "branch {0} already exists: a job with this id made it before; discard that job (or delete \
         the branch with `git branch -D {0}`), then try again"
    )]
    BranchExists(String),

    /// A job's branch is gone.
    #[error(
        "branch {0} does not exist: the job's worktree was discarded, or the branch deleted by hand"
    )]
    NoBranch(String),

    /// Applying or reverting a job would overwrite changes in the workspace; nothing was
    /// written.
    #[error(
        "cannot {operation}: {} conflict with the workspace (edited there since, or an \
         untracked or ignored file is in the way); the workspace was left exactly as it was. \
         Commit, stash, move or undo those, or bring the change over by hand from the job's \
         diff, then try again",
        .files.join(", ")
    )]
    Conflicts {
        /// `apply` or `revert`.
        operation: &'static str,
        /// The files in the way.
        files: Vec<String>,
    },

    /// Writing the workspace failed, and so did putting it back as it was.
    #[error(
        "{source}; restoring the workspace failed as well ({restore}): recover the files with \
         `git restore --source={snapshot} --worktree -- {}`",
        .paths.join(" ")
    )]
    RestoreFailed {
        /// Why writing failed.
        source: Box<GitError>,
        /// Why restoring failed.
        restore: Box<GitError>,
        /// The snapshot the files can be recovered from.
        snapshot: String,
        /// The files to recover.
        paths: Vec<String>,
    },

    /// A git command failed.
    #[error("git {command} failed in {} ({status}): {stderr}", .dir.display())]
    Failed {
        /// The command, without `git`.
        command: String,
        /// Where it ran.
        dir: PathBuf,
        /// How it ended.
        status: String,
        /// What it wrote to stderr.
        stderr: String,
    },

    /// A git command printed what this module does not understand.
    #[error("unexpected output from git {command}: {output:?}")]
    UnexpectedOutput {
        /// The command, without `git`.
        command: String,
        /// What it printed.
        output: String,
    },

    /// A file operation around git failed.
    #[error("{what} {}: {source}", .path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// To which path.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
}

impl GitError {
    /// [`GitError::Io`] of `what` at `path`.
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
    /// `git merge`.
    Merge,
    /// `git rebase`.
    Rebase,
    /// `git cherry-pick`.
    CherryPick,
    /// `git revert`.
    Revert,
    /// `git am`.
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
