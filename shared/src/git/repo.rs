//! Finding the repository a workspace lives in, and whether it is in a state we may write to.

use std::path::{Path, PathBuf};

use super::error::{GitError, Operation};
use super::invocation::{Git, Invocation};
use crate::plain_path;

/// A working tree of a git repository, seen from a workspace directory inside it.
#[derive(Clone, Debug)]
pub struct Repo {
    git: Git,
    top: PathBuf,
    git_dir: PathBuf,
    subdir: PathBuf,
}

/// Why a workspace outside git has no `changes`.
pub fn not_tracked_reason(dir: &Path) -> String {
    format!(
        "not tracked: {} is not inside a git repository",
        dir.display()
    )
}

impl Repo {
    /// The repository `dir` is in, using the `git` on PATH; `Ok(None)` when `dir` is in none
    /// (see [`not_tracked_reason`]).
    pub fn discover(dir: &Path) -> Result<Option<Self>, GitError> {
        Self::discover_with(Git::from_path()?, dir)
    }

    /// As [`Repo::discover`], with a given git.
    pub fn discover_with(git: Git, dir: &Path) -> Result<Option<Self>, GitError> {
        if !dir.is_dir() {
            return Err(GitError::NotADirectory(dir.to_owned()));
        }
        let located = git
            .run(dir)
            .args(["rev-parse", "--path-format=absolute", "--git-dir"])
            .args(["--is-bare-repository", "--is-inside-work-tree"])
            .arg("--show-prefix")
            .allow(&[0, 128])
            .output()?;
        if located.code != 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&located.stdout);
        let mut lines = text.lines();
        let mut next = || lines.next().unwrap_or_default().to_owned();
        let (git_dir, bare, in_tree, prefix) = (next(), next(), next(), next());
        if bare == "true" {
            return Err(GitError::BareRepository(dir.to_owned()));
        }
        if in_tree != "true" {
            return Err(GitError::InsideGitDir(dir.to_owned()));
        }
        let top = git.run(dir).args(["rev-parse", "--show-toplevel"]).text()?;
        Ok(Some(Self {
            git,
            top: plain_path::from_git(&top),
            git_dir: plain_path::from_git(&git_dir),
            subdir: prefix.trim_end_matches('/').into(),
        }))
    }

    /// The top level of the working tree.
    pub fn top(&self) -> &Path {
        &self.top
    }

    /// This working tree's own git directory (`.git`, or `.git/worktrees/<name>` of a linked
    /// worktree): its index and HEAD.
    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The workspace directory relative to [`Repo::top`]; empty at the top.
    pub(crate) fn subdir(&self) -> &Path {
        &self.subdir
    }

    pub(crate) fn git(&self) -> &Git {
        &self.git
    }

    /// The operation the repository is in the middle of, if any.
    pub(crate) fn operation_in_progress(&self) -> Option<Operation> {
        let exists = |name: &str| self.git_dir.join(name).exists();
        if exists("rebase-merge") || exists("rebase-apply/rebasing") {
            Some(Operation::Rebase)
        } else if exists("rebase-apply") {
            Some(Operation::Am)
        } else if exists("MERGE_HEAD") {
            Some(Operation::Merge)
        } else if exists("CHERRY_PICK_HEAD") {
            Some(Operation::CherryPick)
        } else if exists("REVERT_HEAD") {
            Some(Operation::Revert)
        } else {
            None
        }
    }

    /// Refuses to make worktrees in, or write into, a repository half-way through an operation.
    pub(crate) fn ensure_settled(&self) -> Result<(), GitError> {
        match self.operation_in_progress() {
            None => Ok(()),
            Some(operation) => Err(GitError::OperationInProgress {
                top: self.top.clone(),
                operation,
            }),
        }
    }

    /// A git command run at the top of the working tree.
    pub(crate) fn run(&self) -> Invocation<'_> {
        self.git.run(&self.top)
    }

    /// The commit HEAD points at; `None` before the first commit.
    pub(crate) fn head(&self) -> Result<Option<String>, GitError> {
        self.resolve("HEAD^{commit}")
    }

    /// The object a revision names, `None` when it names nothing.
    pub(crate) fn resolve(&self, revision: &str) -> Result<Option<String>, GitError> {
        let ran = self
            .run()
            .args([
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                revision,
            ])
            .allow(&[0, 1])
            .output()?;
        let oid = String::from_utf8_lossy(&ran.stdout).trim().to_owned();
        Ok((ran.code == 0 && !oid.is_empty()).then_some(oid))
    }
}
