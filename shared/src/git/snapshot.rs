//! Snapshots of a working tree's state (tracked files as they are on disk, and untracked files
//! that are not ignored) as commits under our own refs, without touching the user's index,
//! HEAD, branches or files.

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
    pub commit: String,
    pub tree: String,
}

impl Repo {
    /// Records the working tree as it is now under `refs/cli-agent-mcp/<job>/<label>`: a
    /// copy of this worktree's index, `git add -A` into it, `write-tree`, then a commit whose
    /// parent is HEAD (none before the first commit). Submodules are recorded as the commit
    /// their checkout is at (a gitlink), not their files.
    pub fn snapshot(&self, job: &JobKey, label: &str) -> Result<Snapshot, GitError> {
        let name = job.snapshot_ref(label)?;
        let index = TempIndex::copy_of(&self.git_dir().join("index"))?;
        self.run()
            .index(index.path())
            .args(["add", "--all"])
            .output()?;
        let tree = self.run().index(index.path()).arg("write-tree").text()?;
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
