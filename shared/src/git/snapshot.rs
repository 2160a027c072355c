//! Snapshots of a working tree's state (tracked files as they are on disk, and untracked files
//! that are not ignored) as commits under our own refs, without touching the user's index,
//! HEAD, branches or files.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::GitError;
use super::job::JobKey;
use super::repo::Repo;
use super::temp_index::TempIndex;

/// The empty tree: the base of a worktree made before the repository's first commit.
const EMPTY_TREE_INPUT: &[u8] = b"";

/// One recorded state: a commit (kept reachable by a ref of the job) and its tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Snapshot {
    /// The commit's id.
    pub commit: String,
    /// Its tree's id.
    pub tree: String,
}

/// The index a snapshot of a working tree was made with, kept for the next snapshot of the
/// same tree: its stat data is fresh and the tree's untracked files are in it already, so the
/// next one re-reads only what changed since. It serves only while the tree's own index is as
/// it was when copied (any `git add`, commit or refresh in between changes it, and the next
/// snapshot then starts from a fresh copy). Its file goes when it is dropped.
#[derive(Debug)]
pub struct KeptIndex {
    index: TempIndex,
    copied_from: IndexStamp,
}

/// What tells that an index file was rewritten: git replaces it with a new file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct IndexStamp {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl IndexStamp {
    fn of(index: &Path) -> Self {
        std::fs::metadata(index).map_or(
            Self {
                inode: 0,
                len: 0,
                modified: None,
            },
            |meta| Self {
                inode: crate::platform::file_id(&meta),
                len: meta.len(),
                modified: meta.modified().ok(),
            },
        )
    }
}

impl Repo {
    /// Records the working tree as it is now under `refs/cli-agent-mcp/<job>/<label>`: a
    /// copy of this worktree's index, `git add -A` into it, `write-tree`, then a commit whose
    /// parent is HEAD (none before the first commit). Submodules are recorded as the commit
    /// their checkout is at (a gitlink), not their files.
    pub fn snapshot(&self, job: &JobKey, label: &str) -> Result<Snapshot, GitError> {
        self.snapshot_keeping_index(job, label)
            .map(|(snapshot, _)| snapshot)
    }

    /// As [`Repo::snapshot`], keeping the index it was made with for the next snapshot of
    /// this tree ([`Repo::snapshot_after`]).
    pub fn snapshot_keeping_index(
        &self,
        job: &JobKey,
        label: &str,
    ) -> Result<(Snapshot, KeptIndex), GitError> {
        let own = self.git_dir().join("index");
        let copied_from = IndexStamp::of(&own);
        let index = TempIndex::copy_of(&own)?;
        let snapshot = self.record(job, label, index.path())?;
        Ok((snapshot, KeptIndex { index, copied_from }))
    }

    /// A snapshot of the tree an earlier one kept its index from: it starts from that index
    /// while this tree's own index is unchanged since, and from a fresh copy otherwise.
    pub fn snapshot_after(
        &self,
        job: &JobKey,
        label: &str,
        kept: &KeptIndex,
    ) -> Result<Snapshot, GitError> {
        if IndexStamp::of(&self.git_dir().join("index")) != kept.copied_from {
            return self.snapshot(job, label);
        }
        self.record(job, label, kept.index.path())
    }

    /// `git add -A` into `index`, `write-tree`, and the commit under the job's `label`.
    fn record(&self, job: &JobKey, label: &str, index: &Path) -> Result<Snapshot, GitError> {
        let name = job.snapshot_ref(label)?;
        self.run().index(index).args(["add", "--all"]).output()?;
        let tree = self.run().index(index).arg("write-tree").text()?;
        let snapshot = self.commit_tree(tree, self.head()?, &name)?;
        self.set_ref(&name, &snapshot.commit)?;
        Ok(snapshot)
    }

    /// HEAD as a snapshot, recorded under the job's `label` (an empty tree before the first
    /// commit).
    pub(crate) fn snapshot_head(&self, job: &JobKey, label: &str) -> Result<Snapshot, GitError> {
        let name = job.snapshot_ref(label)?;
        let snapshot = match self.head()? {
            Some(commit) => Snapshot {
                tree: self
                    .run()
                    .args(["rev-parse", &format!("{commit}^{{tree}}")])
                    .text()?,
                commit,
            },
            None => {
                let tree = self
                    .run()
                    .args(["hash-object", "-t", "tree", "-w", "--stdin"])
                    .stdin(EMPTY_TREE_INPUT.to_vec())
                    .text()?;
                self.commit_tree(tree, None, &name)?
            }
        };
        self.set_ref(&name, &snapshot.commit)?;
        Ok(snapshot)
    }

    fn commit_tree(
        &self,
        tree: String,
        parent: Option<String>,
        name: &str,
    ) -> Result<Snapshot, GitError> {
        let mut command = self.run().args(["commit-tree", &tree, "-m", name]);
        if let Some(parent) = parent {
            command = command.args(["-p", &parent]);
        }
        let commit = command.text()?;
        Ok(Snapshot { commit, tree })
    }

    pub(crate) fn set_ref(&self, name: &str, commit: &str) -> Result<(), GitError> {
        self.run()
            .args(["update-ref", name, commit])
            .retry_when_busy()
            .output()
            .map(drop)
    }

    /// Deletes refs in one transaction; refs already gone are no error.
    pub(crate) fn delete_refs(&self, names: &[String]) -> Result<(), GitError> {
        if names.is_empty() {
            return Ok(());
        }
        let script: String = names
            .iter()
            .map(|name| format!("delete {name}\n"))
            .collect();
        self.run()
            .args(["update-ref", "--stdin"])
            .stdin(script.into_bytes())
            .retry_when_busy()
            .output()
            .map(drop)
    }

    /// Every ref of the job: its snapshots.
    pub(crate) fn job_refs(&self, job: &JobKey) -> Result<Vec<String>, GitError> {
        let listed = self
            .run()
            .args(["for-each-ref", "--format=%(refname)", &job.refs_prefix()])
            .text()?;
        Ok(listed.lines().map(str::to_owned).collect())
    }
}
