//! Reviewing what a job changed, after it ran: its diff; bringing an isolated job's work into
//! the caller's workspace (apply) or dropping it (discard); taking an in-place job's changes
//! out again (revert). Each reads the job's tree from the store and drives git: blocking calls,
//! for `spawn_blocking` or the command line. Nothing here touches the user's index, HEAD,
//! branches or stash; apply and revert write the workspace's files, all or nothing.

use cli_agent_engine::git::{BranchFate, GitError, JobKey, Merged, Mode, Repo, Snapshot};
use cli_agent_engine::isolation::TreeError;
use schemars::JsonSchema;
use serde::Serialize;

use super::store::{JobId, JobStatus, Store, StoreError, TreeRecord, TreeState};

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error(
        "job {0} has no changes on record: it ran read-only in its workspace, outside git, or \
         never started"
    )]
    NoTree(JobId),
    #[error("job {id} is still {status}: wait for it to end (job_wait), then try again")]
    Unfinished { id: JobId, status: JobStatus },
    #[error(
        "job {0} ran in the workspace itself: its changes are there already; job_revert takes \
         them out again"
    )]
    InPlace(JobId),
    #[error(
        "job {0} ran in a worktree of its own and the workspace never had its changes: \
         job_discard drops them, job_apply brings them in"
    )]
    Isolated(JobId),
    #[error("job {id}'s changes were {state} already: there is nothing left to {action}")]
    Done {
        id: JobId,
        state: &'static str,
        action: &'static str,
    },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Tree(#[from] TreeError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What discarding a job removed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Discarded {
    pub job_id: JobId,
    /// The worktree directory removed, when there still was one.
    pub worktree: Option<std::path::PathBuf>,
    pub branch: String,
}

/// A finished job's tree, with its key in git.
struct Reviewed {
    id: JobId,
    key: JobKey,
    record: TreeRecord,
}

impl Reviewed {
    fn load(store: &Store, id: &JobId) -> Result<Self, ReviewError> {
        let status = store
            .get(id)?
            .ok_or_else(|| store.unknown_job(id))?
            .status;
        let record = store.tree(id)?.ok_or_else(|| ReviewError::NoTree(id.clone()))?;
        if !status.is_finished() {
            return Err(ReviewError::Unfinished {
                id: id.clone(),
                status,
            });
        }
        let key = JobKey::new(id.as_str()).map_err(ReviewError::Git)?;
        Ok(Self {
            id: id.clone(),
            key,
            record,
        })
    }

    /// The tree after the run; for a run nobody saw end, its tree as it is now.
    fn after(&mut self, store: &Store) -> Result<Snapshot, ReviewError> {
        if let Some(after) = &self.record.after {
            return Ok(after.clone());
        }
        let repo = self.record.tree.repository()?;
        let after = self
            .record
            .tree
            .working_repo(&repo)?
            .snapshot(&self.key, "after")?;
        self.record.after = Some(after.clone());
        store.set_tree(&self.id, &self.record)?;
        Ok(after)
    }

    fn refuse_done(&self, action: &'static str) -> Result<(), ReviewError> {
        let state = match self.record.state {
            TreeState::Applied => "applied",
            TreeState::Discarded => "discarded",
            TreeState::Reverted => "reverted",
            TreeState::Removed => "none (the run changed nothing)",
            TreeState::Running | TreeState::InPlace | TreeState::Kept => return Ok(()),
        };
        Err(ReviewError::Done {
            id: self.id.clone(),
            state,
            action,
        })
    }

    fn set_state(&mut self, store: &Store, state: TreeState) -> Result<(), ReviewError> {
        self.record.state = state;
        Ok(store.set_tree(&self.id, &self.record)?)
    }
}

/// The job's unified diff (rename-aware; binary files named, not dumped), optionally for some
/// paths only (relative to the repository's top level).
pub fn diff(store: &Store, id: &JobId, paths: &[String]) -> Result<String, ReviewError> {
    let mut job = Reviewed::load(store, id)?;
    let after = job.after(store)?;
    let repo = job.record.tree.repository()?;
    Ok(repo.diff(&job.record.tree.before, &after, paths)?)
}

/// Brings an isolated job's changes into the caller's workspace as uncommitted changes, by a
/// three-way merge against its base; refuses naming each conflicting file. Written, the
/// worktree goes and the branch stays until the job is pruned.
pub fn apply(store: &Store, id: &JobId, check: bool) -> Result<Merged, ReviewError> {
    let mut job = Reviewed::load(store, id)?;
    job.refuse_done("apply")?;
    let Some(worktree) = job.record.tree.worktree.clone() else {
        return Err(ReviewError::InPlace(id.clone()));
    };
    let after = job.after(store)?;
    let repo = job.record.tree.repository()?;
    let mode = if check { Mode::Check } else { Mode::Write };
    let merged = repo.apply(&job.key, &job.record.tree.before, &after, mode)?;
    if !check {
        job.set_state(store, TreeState::Applied)?;
        // The changes are in: a worktree that will not go is only left to clean.
        if let Err(error) = repo.remove_worktree(&worktree.path, &worktree.branch, BranchFate::Keep)
        {
            tracing::warn!(job = %id, %error, "applied, but the job's worktree could not be removed");
        }
    }
    Ok(merged)
}

/// Removes an isolated job's worktree and branch. Its snapshots stay (its diff still reads)
/// until the job is pruned.
pub fn discard(store: &Store, id: &JobId) -> Result<Discarded, ReviewError> {
    let mut job = Reviewed::load(store, id)?;
    if matches!(job.record.state, TreeState::Discarded | TreeState::Removed) {
        job.refuse_done("discard")?;
    }
    let Some(worktree) = job.record.tree.worktree.clone() else {
        return Err(ReviewError::InPlace(id.clone()));
    };
    let repo = job.record.tree.repository()?;
    let present = worktree.path.exists();
    if present {
        job.after(store)?;
    }
    repo.remove_worktree(&worktree.path, &worktree.branch, BranchFate::Delete)?;
    job.set_state(store, TreeState::Discarded)?;
    Ok(Discarded {
        job_id: id.clone(),
        worktree: present.then_some(worktree.path),
        branch: worktree.branch,
    })
}

/// Takes an in-place job's changes out of the workspace where its files still hold them;
/// refuses naming the files that changed since, all or nothing.
pub fn revert(store: &Store, id: &JobId, check: bool) -> Result<Merged, ReviewError> {
    let mut job = Reviewed::load(store, id)?;
    job.refuse_done("revert")?;
    if job.record.tree.worktree.is_some() {
        return Err(ReviewError::Isolated(id.clone()));
    }
    let after = job.after(store)?;
    let repo: Repo = job.record.tree.repository()?;
    let mode = if check { Mode::Check } else { Mode::Write };
    let merged = repo.revert(&job.key, &job.record.tree.before, &after, mode)?;
    if !check {
        job.set_state(store, TreeState::Reverted)?;
    }
    Ok(merged)
}
