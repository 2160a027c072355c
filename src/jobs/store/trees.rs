//! Where each job worked (its tree: the repository, the snapshots, an isolated run's worktree)
//! and what became of it since: kept for review, applied, discarded, reverted. Written when the
//! run is placed, so that a later server finds the worktree of a run nobody saw end.

use std::path::PathBuf;

use cli_agent_engine::git::{JobKey, Snapshot};
use cli_agent_engine::isolation::RunTree;
use rusqlite::{OptionalExtension, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::id::JobId;
use super::{Store, StoreError};

/// What became of a job's tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TreeState {
    /// The run is on (or its server died before it ended: the worktree is there to review).
    Running,
    /// An in-place run ended; its changes are in the workspace.
    InPlace,
    /// An isolated run ended and its worktree is kept for review.
    Kept,
    /// An isolated run changed nothing: its worktree, branch and refs are gone.
    Removed,
    /// Its changes were brought into the workspace; the worktree is gone, the branch kept.
    Applied,
    /// Its worktree and branch were removed on request.
    Discarded,
    /// An in-place run's changes were taken out of the workspace again.
    Reverted,
}

impl TreeState {
    pub const ALL: [TreeState; 7] = [
        Self::Running,
        Self::InPlace,
        Self::Kept,
        Self::Removed,
        Self::Applied,
        Self::Discarded,
        Self::Reverted,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::InPlace => "in_place",
            Self::Kept => "kept",
            Self::Removed => "removed",
            Self::Applied => "applied",
            Self::Discarded => "discarded",
            Self::Reverted => "reverted",
        }
    }
}

impl std::str::FromStr for TreeState {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|state| state.name() == s)
            .ok_or_else(|| format!("unknown tree state `{s}`"))
    }
}

impl std::fmt::Display for TreeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A job's tree as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TreeRecord {
    pub tree: RunTree,
    /// The tree just after the run, once it ended and was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Snapshot>,
    pub state: TreeState,
}

impl TreeRecord {
    /// The job's worktree directory, while it has one.
    pub fn live_worktree(&self) -> Option<&std::path::Path> {
        let worktree = self.tree.worktree.as_ref()?;
        matches!(self.state, TreeState::Running | TreeState::Kept)
            .then_some(worktree.path.as_path())
    }
}

impl Store {
    /// Records (or replaces) job `id`'s tree.
    pub fn set_tree(&self, id: &JobId, record: &TreeRecord) -> Result<(), StoreError> {
        let json = serde_json::to_string(record).map_err(self.bad_record(id))?;
        let changed = self
            .conn()
            .execute(
                "UPDATE jobs SET tree = ?2, tree_state = ?3 WHERE id = ?1",
                params![id.as_str(), json, record.state.name()],
            )
            .map_err(self.fail())?;
        if changed == 0 {
            return Err(self.unknown_job(id));
        }
        Ok(())
    }

    /// Job `id`'s tree; `None` when it has none (read-only in place, outside git, not started).
    pub fn tree(&self, id: &JobId) -> Result<Option<TreeRecord>, StoreError> {
        let json: Option<Option<String>> = self
            .conn()
            .query_row(
                "SELECT tree FROM jobs WHERE id = ?1",
                [id.as_str()],
                |row| row.get(0),
            )
            .optional()
            .map_err(self.fail())?;
        let Some(json) = json else {
            return Err(self.unknown_job(id));
        };
        json.map(|json| serde_json::from_str(&json).map_err(self.bad_record(id)))
            .transpose()
    }

    /// The jobs whose worktree is still there (running or kept), oldest first.
    pub fn live_worktrees(&self) -> Result<Vec<(JobId, PathBuf)>, StoreError> {
        let conn = self.conn();
        let mut select = conn
            .prepare_cached(
                "SELECT id, tree ->> '$.tree.worktree.path' FROM jobs
                 WHERE tree_state IN ('running', 'kept') AND tree ->> '$.tree.worktree' IS NOT NULL
                 ORDER BY created_ms",
            )
            .map_err(self.fail())?;
        let rows = select
            .query_map([], |row| {
                Ok((
                    JobId::stored(row.get(0)?),
                    PathBuf::from(row.get::<_, String>(1)?),
                ))
            })
            .map_err(self.fail())?;
        rows.collect::<Result<_, _>>().map_err(self.fail())
    }
}

impl Store {
    /// The files each other job changed whose worktree in `repo` is kept for review.
    pub fn kept_changes(
        &self,
        repo: &std::path::Path,
        except: &JobId,
    ) -> Result<Vec<(JobId, Vec<String>)>, StoreError> {
        let conn = self.conn();
        let mut select = conn
            .prepare_cached(
                "SELECT jobs.id, file.value ->> '$.path'
                 FROM jobs, json_each(jobs.outcome, '$.tree.changes.files') AS file
                 WHERE jobs.tree_state = 'kept' AND jobs.tree ->> '$.tree.repo' = ?1
                   AND jobs.id != ?2
                 ORDER BY jobs.created_ms",
            )
            .map_err(self.fail())?;
        let rows = select
            .query_map(params![repo.to_string_lossy(), except.as_str()], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(self.fail())?;
        let mut found: Vec<(JobId, Vec<String>)> = Vec::new();
        for row in rows {
            let (id, path) = row.map_err(self.fail())?;
            match found.last_mut() {
                Some((last, paths)) if last.as_str() == id => paths.push(path),
                _ => found.push((JobId::stored(id), vec![path])),
            }
        }
        Ok(found)
    }
}

/// Removes what a pruned job left in its repository: worktree, branch and refs. Best effort:
/// a repository moved or deleted since has nothing left to clean.
pub(super) fn forget_trees(trees: Vec<(String, String)>) {
    for (id, json) in trees {
        let Ok(record) = serde_json::from_str::<TreeRecord>(&json) else {
            continue;
        };
        let forgotten = JobKey::new(id.clone())
            .map_err(|e| e.to_string())
            .and_then(|key| {
                let repo = record.tree.repository().map_err(|e| e.to_string())?;
                repo.forget(&key).map_err(|e| e.to_string())
            });
        if let Err(error) = forgotten {
            tracing::warn!(job = %id, %error, "could not remove a pruned job's worktree, branch or refs");
        }
    }
}
