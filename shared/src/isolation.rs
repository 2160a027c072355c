//! Where a run works, and what it changed there. A run that may write, in a git repository, is
//! measured by two snapshots of its tree (just before, just after), by content. An isolated run
//! works in a worktree of its own made from the caller's working state, and keeps it only when it
//! changed something. The git work blocks: the engine calls it off the runtime's threads.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::git::{BranchFate, Changes, GitError, JobKey, KeptIndex, Repo, Snapshot, Worktree};
use crate::request::{Base, Isolation, Permission};

/// Why a run's tree could not be made or measured; the message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// An isolated run's workspace is in no git repository.
    #[error(
        "isolation `worktree` needs a git repository, and {} is in none: run the agent in a \
         checkout (or `git init` and commit there), or call with isolation `none`",
        .0.display()
    )]
    NotARepository(PathBuf),
    /// Git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A bug: the git work's task failed.
    #[error(
        "internal error in cli-agent-mcp while preparing the run's tree: {0}. Please report this bug"
    )]
    Internal(String),
}

/// What the caller decides about a run's tree: the job it belongs to and where worktrees go.
#[derive(Clone, Debug)]
pub(crate) struct TreePlan {
    pub isolation: Isolation,
    pub base: Base,
    /// Names the run's refs and branch.
    pub job: JobKey,
    /// The directory under which worktrees are made (`<dir>/<job>`).
    pub worktrees: PathBuf,
}

/// A run's tree as it starts. Recorded before the agent runs, so that a later server finds the
/// worktree of a run this one did not see end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunTree {
    /// In place, or in a worktree of its own.
    pub isolation: Isolation,
    /// The top level of the caller's repository.
    pub repo: PathBuf,
    /// What the run is measured against: the workspace just before (in place), or the
    /// worktree's base (isolated).
    pub before: Snapshot,
    /// An isolated run's worktree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<Worktree>,
    /// The before snapshot's index, for the after snapshot of a run in place; not recorded
    /// (a later server settling the run starts from a copy).
    #[serde(skip)]
    #[schemars(skip)]
    pub kept_index: BeforeIndex,
}

/// A cache, not part of what a run's tree is: two trees are equal whatever it holds.
#[derive(Clone, Debug, Default)]
pub struct BeforeIndex(Option<Arc<KeptIndex>>);

impl PartialEq for BeforeIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for BeforeIndex {}

/// How a run's tree is known.
#[derive(Clone, Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per run, held in place for its length: boxing would buy nothing"
)]
pub(crate) enum Tracking {
    /// In git: measured from its "before" snapshot.
    Tracked(RunTree),
    /// Outside git: the reason its `changes` give.
    NotTracked(String),
    /// A read-only run in place: it may write nothing, so nothing is measured.
    Off,
}

/// What a run changed, and where: part of its outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TreeOutcome {
    /// The files the run changed.
    pub changes: Changes,
    /// Where the run worked, when it was in git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<RunTree>,
    /// The tree just after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Snapshot>,
    /// An isolated run's worktree is still there (it changed something, or measuring failed).
    #[serde(default)]
    pub kept: bool,
}

impl TreePlan {
    /// Takes the "before" snapshot and, for an isolated run, makes its worktree.
    pub fn begin(&self, workspace: &Path, permission: Permission) -> Result<Tracking, TreeError> {
        if self.isolation == Isolation::None && permission == Permission::ReadOnly {
            return Ok(Tracking::Off);
        }
        let Some(repo) = Repo::discover(workspace)? else {
            return match self.isolation {
                Isolation::None => Ok(Tracking::NotTracked(crate::git::not_tracked_reason(
                    workspace,
                ))),
                Isolation::Worktree => Err(TreeError::NotARepository(workspace.to_owned())),
            };
        };
        let (before, worktree, kept) = match self.isolation {
            Isolation::None => {
                let (before, kept) = repo.snapshot_keeping_index(&self.job, "before")?;
                (before, None, Some(Arc::new(kept)))
            }
            Isolation::Worktree => {
                let path = self.worktrees.join(self.job.as_str());
                let worktree = repo.create_worktree(&self.job, &path, self.base)?;
                (worktree.base.clone(), Some(worktree), None)
            }
        };
        Ok(Tracking::Tracked(RunTree {
            isolation: self.isolation,
            repo: repo.top().to_owned(),
            before,
            worktree,
            kept_index: BeforeIndex(kept),
        }))
    }
}

/// Whether a workspace can hold a run of this isolation: a quick look, before a call is taken.
pub fn check_workspace(workspace: &Path, isolation: Isolation) -> Result<(), TreeError> {
    let repo = Repo::discover(workspace)?;
    match (isolation, repo) {
        (Isolation::Worktree, None) => Err(TreeError::NotARepository(workspace.to_owned())),
        (Isolation::Worktree, Some(repo)) => Ok(repo.ensure_settled()?),
        (Isolation::None, _) => Ok(()),
    }
}

impl RunTree {
    /// Where the agent runs, when not in the caller's workspace.
    pub fn workdir(&self) -> Option<&Path> {
        self.worktree.as_ref().map(|tree| tree.workdir.as_path())
    }

    /// Takes the "after" snapshot and measures the run. An isolated run that changed nothing
    /// (no file, no commit of its own) has its worktree, branch and refs removed.
    pub fn settle(self, job: &JobKey) -> Result<TreeOutcome, TreeError> {
        let repo = self.repository()?;
        let working = self.working_repo(&repo)?;
        let after = match &self.kept_index.0 {
            Some(kept) => working.snapshot_after(job, "after", kept)?,
            None => working.snapshot(job, "after")?,
        };
        let changes = repo.changes(&self.before, &after)?;
        let kept = match &self.worktree {
            None => false,
            Some(tree) if changes.is_empty() && !repo.has_own_commits(tree)? => {
                repo.remove_worktree(&tree.path, &tree.branch, BranchFate::Delete)?;
                repo.forget(job)?;
                false
            }
            Some(_) => true,
        };
        let forgotten = self.worktree.is_some() && !kept;
        Ok(TreeOutcome {
            changes,
            after: (!forgotten).then_some(after),
            tree: Some(self),
            kept,
        })
    }

    /// The caller's repository.
    pub fn repository(&self) -> Result<Repo, TreeError> {
        Repo::discover(&self.repo)?.ok_or_else(|| TreeError::NotARepository(self.repo.clone()))
    }

    /// The repository whose working state the run changed: its worktree, or the caller's.
    pub fn working_repo(&self, repo: &Repo) -> Result<Repo, TreeError> {
        match &self.worktree {
            None => Ok(repo.clone()),
            Some(tree) => Repo::discover(&tree.path)?
                .ok_or_else(|| TreeError::NotARepository(tree.path.clone())),
        }
    }
}

impl TreeOutcome {
    /// A run whose changes could not be measured: its worktree, if any, stays.
    pub fn unmeasured(tree: RunTree) -> Self {
        Self {
            changes: Changes::default(),
            kept: tree.worktree.is_some(),
            tree: Some(tree),
            after: None,
        }
    }

    /// The outcome of a run outside git.
    pub fn not_tracked(reason: String) -> Self {
        Self {
            changes: Changes::not_tracked(reason),
            tree: None,
            after: None,
            kept: false,
        }
    }
}
