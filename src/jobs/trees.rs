//! The trees jobs work in. An isolated call is checked before it is taken (a repository, no
//! merge under way, room under the worktree limit); a run is placed and its tree recorded before
//! its agent starts; its fate is recorded when it ends. In-place runs of this server that
//! overlap in one repository are told so, and runs that changed the same files as a worktree
//! kept for review are told which.

use std::collections::BTreeSet;

use cli_agent_engine::Isolation;
use cli_agent_engine::git::JobKey;
use cli_agent_engine::isolation::{TreeError, TreeOutcome, check_workspace};
use cli_agent_engine::{Outcome, Placed, Prepared, RunRequest, SetupError};

use super::in_place::InPlace;
use super::manager::Jobs;
use super::store::{JobId, Store, StoreError, TreeRecord, TreeState};

#[derive(Debug, thiserror::Error)]
pub enum TreeRefusal {
    #[error(
        "isolation `worktree` needs the job store, which is unusable ({0}): fix it (or set \
         CAM_STATE_DIR to a writable directory) and restart the server, or call with isolation \
         `none`"
    )]
    NoStore(String),
    #[error(
        "{count} worktrees of isolated jobs exist already, the most this server allows \
         (CAM_MAX_WORKTREES={max}): review them and discard the ones you are done with \
         (job_discard, or `cli-agent-mcp jobs discard ID`): {jobs}"
    )]
    TooMany {
        count: usize,
        max: usize,
        jobs: String,
    },
    #[error(transparent)]
    Tree(#[from] TreeError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Jobs {
    /// Refuses a call whose tree cannot be made, before it is taken.
    pub async fn check_tree(&self, request: &RunRequest) -> Result<(), TreeRefusal> {
        if request.isolation == Isolation::None {
            return Ok(());
        }
        let store = self
            .store_or_problem()
            .map_err(|problem| TreeRefusal::NoStore(problem.to_owned()))?
            .clone();
        let (workspace, max) = (request.workspace.clone(), self.max_worktrees());
        tokio::task::spawn_blocking(move || {
            check_workspace(&workspace, Isolation::Worktree)?;
            room_for_a_worktree(&store, max)
        })
        .await
        .map_err(|error| TreeRefusal::Tree(TreeError::Internal(error.to_string())))?
    }

    /// Measures a run that may write, or isolates it, and records its tree before it starts.
    pub(super) async fn place(
        &self,
        id: &JobId,
        prepared: Prepared,
    ) -> Result<(Placed, Option<InPlace>), SetupError> {
        let worktrees = match self.store_or_problem() {
            Ok(store) => store.worktrees_dir(),
            Err(_) if prepared.request().isolation == Isolation::None => std::env::temp_dir(),
            Err(problem) => {
                let refusal = TreeRefusal::NoStore(problem.to_owned());
                return Err(TreeError::Internal(refusal.to_string()).into());
            }
        };
        let key = JobKey::new(id.as_str()).map_err(TreeError::from)?;
        let placed = self.engine().place(prepared, key, worktrees).await?;
        let Some(tree) = placed.tree() else {
            return Ok((placed, None));
        };
        let record = TreeRecord {
            tree: tree.clone(),
            after: None,
            state: TreeState::Running,
        };
        let id = id.clone();
        let in_place =
            (tree.isolation == Isolation::None).then(|| self.in_place.enter(&tree.repo, &id));
        self.record(move |store| store.set_tree(&id, &record)).await;
        Ok((placed, in_place))
    }

    /// Records what became of a finished run's tree, and warns of what it may collide with.
    pub(super) async fn tree_finished(
        &self,
        id: &JobId,
        outcome: &mut Outcome,
        in_place: Option<InPlace>,
    ) {
        if let Some(others) = in_place
            .map(|entry| entry.others())
            .filter(|o| !o.is_empty())
        {
            outcome.warnings.push(format!(
                "other runs of this server worked in the same repository at the same time ({}): \
                 the changes reported may include their edits, and theirs may include this \
                 run's; isolation `worktree` keeps runs apart",
                others.join(", ")
            ));
        }
        let Some(record) = outcome.tree.as_ref().and_then(finished_record) else {
            return;
        };
        if let Some(tree) = &outcome.tree {
            self.warn_of_shared_files(id, tree, &mut outcome.warnings)
                .await;
        }
        let id = id.clone();
        self.record(move |store| store.set_tree(&id, &record)).await;
    }

    /// Names the kept worktrees of other jobs that changed some of the same files.
    async fn warn_of_shared_files(
        &self,
        id: &JobId,
        tree: &TreeOutcome,
        warnings: &mut Vec<String>,
    ) {
        let (Ok(store), Some(run_tree)) = (self.store(), tree.tree.as_ref()) else {
            return;
        };
        let paths: BTreeSet<String> = tree.changes.files.iter().map(|f| f.path.clone()).collect();
        if paths.is_empty() {
            return;
        }
        let (id, repo) = (id.clone(), run_tree.repo.clone());
        let found = tokio::task::spawn_blocking(move || store.kept_changes(&repo, &id)).await;
        for (other, files) in found.ok().and_then(Result::ok).unwrap_or_default() {
            let shared: Vec<_> = files.into_iter().filter(|f| paths.contains(f)).collect();
            if !shared.is_empty() {
                warnings.push(format!(
                    "job {other} also changed {} and its worktree is kept for review: applying \
                     both may conflict (job_diff both, apply one)",
                    shared.join(", ")
                ));
            }
        }
    }
}

/// At a server's start: the worktrees of interrupted jobs stay (they are reviewable); those
/// deleted by hand are recorded as discarded, and git's records of them pruned. Best effort.
pub fn tidy_worktrees(store: &Store) {
    let Ok(live) = store.live_worktrees() else {
        return;
    };
    for (id, path) in live.into_iter().filter(|(_, path)| !path.exists()) {
        let Ok(Some(mut record)) = store.tree(&id) else {
            continue;
        };
        if let Ok(repo) = record.tree.repository()
            && let Err(error) = repo.prune_missing_worktrees()
        {
            tracing::warn!(job = %id, %error, "could not prune git's record of a deleted worktree");
        }
        record.state = TreeState::Discarded;
        if store.set_tree(&id, &record).is_ok() {
            tracing::info!(job = %id, worktree = %path.display(), "a job's worktree was deleted by hand: recorded as discarded");
        }
    }
}

/// The store's record of a finished run's tree.
fn finished_record(outcome: &TreeOutcome) -> Option<TreeRecord> {
    let tree = outcome.tree.clone()?;
    let state = match (tree.worktree.is_some(), outcome.kept) {
        (false, _) => TreeState::InPlace,
        (true, true) => TreeState::Kept,
        (true, false) => TreeState::Removed,
    };
    Some(TreeRecord {
        tree,
        after: outcome.after.clone(),
        state,
    })
}

/// Refuses a new worktree when `max` exist already, naming them.
fn room_for_a_worktree(store: &Store, max: usize) -> Result<(), TreeRefusal> {
    let live = store.live_worktrees()?;
    if live.len() < max {
        return Ok(());
    }
    let jobs: Vec<_> = live.iter().map(|(id, _)| id.to_string()).collect();
    Err(TreeRefusal::TooMany {
        count: live.len(),
        max,
        jobs: jobs.join(", "),
    })
}
