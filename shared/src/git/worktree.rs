//! Worktrees of our jobs: made on a branch of their own from a snapshot, outside the
//! repository; removed, kept, listed and pruned.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::GitError;
use super::job::JobKey;
use super::repo::Repo;
use super::snapshot::Snapshot;
use crate::request::Base;

/// The label of the snapshot a worktree starts from.
const BASE_LABEL: &str = "base";

/// A job's worktree as made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Worktree {
    /// Its top level.
    pub path: PathBuf,
    /// Where the agent runs: the workspace's subdirectory, in the worktree.
    pub workdir: PathBuf,
    /// Its branch, `cli-agent-mcp/<job>`.
    pub branch: String,
    /// The snapshot it starts from, which its changes are measured against.
    pub base: Snapshot,
    /// Git-ignored files copied in because `.worktreeinclude` names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub included: Vec<String>,
}

/// What becomes of a job's branch when its worktree is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BranchFate {
    /// The branch stays, with the job's commits.
    Keep,
    /// The branch goes too.
    Delete,
}

/// One of our worktrees as git records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobWorktree {
    /// The job's key, from its branch's name.
    pub job: String,
    /// Its top level.
    pub path: PathBuf,
    /// Its branch.
    pub branch: String,
    /// Its directory is gone (deleted by hand); git still has its record.
    pub missing: bool,
}

impl Repo {
    /// Makes job `job`'s worktree at `path` (which must not exist; place it outside the
    /// repository) on the new branch `cli-agent-mcp/<job>`, from `base`, and copies the
    /// `.worktreeinclude` files in. On failure nothing is left: no directory, branch, ref or
    /// worktree record.
    pub fn create_worktree(
        &self,
        job: &JobKey,
        path: &Path,
        base: Base,
    ) -> Result<Worktree, GitError> {
        self.ensure_settled()?;
        if path.symlink_metadata().is_ok() {
            return Err(GitError::WorktreePathExists(path.to_owned()));
        }
        let branch = job.branch();
        if self.resolve(&job.branch_ref())?.is_some() {
            return Err(GitError::BranchExists(branch));
        }
        let mut undo = Undo::new(self, job, path);
        undo.base_ref = true;
        let base = match base {
            Base::WorkingState => self.snapshot(job, BASE_LABEL)?,
            Base::Head => self.snapshot_head(job, BASE_LABEL)?,
        };
        self.run()
            .args(["update-ref", &job.branch_ref(), &base.commit, ""])
            .retry_when_busy()
            .output()?;
        undo.branch = true;
        undo.worktree = true;
        self.run()
            .args(["worktree", "add", "--quiet"])
            .arg(path)
            .arg(&branch)
            .parallel_checkout()
            .retry_when_busy()
            .output()?;
        let included = self.copy_included(path)?;
        let workdir = path.join(self.subdir());
        std::fs::create_dir_all(&workdir)
            .map_err(|error| GitError::io("could not create", &workdir, error))?;
        undo.disarm();
        Ok(Worktree {
            path: path.to_owned(),
            workdir,
            branch,
            base,
            included,
        })
    }

    /// Whether the job's branch has commits beyond the worktree's base.
    pub fn has_own_commits(&self, worktree: &Worktree) -> Result<bool, GitError> {
        let branch = format!("refs/heads/{}", worktree.branch);
        if self.resolve(&branch)?.is_none() {
            return Err(GitError::NoBranch(worktree.branch.clone()));
        }
        let range = format!("{}..{branch}", worktree.base.commit);
        let count = self.run().args(["rev-list", "--count", &range]).text()?;
        Ok(count != "0")
    }

    /// Removes a worktree's directory and git's record of it (also when the directory was
    /// already deleted by hand), keeping or deleting its branch.
    pub fn remove_worktree(
        &self,
        path: &Path,
        branch: &str,
        fate: BranchFate,
    ) -> Result<(), GitError> {
        self.remove_worktree_dir(path)?;
        if fate == BranchFate::Delete {
            self.delete_branch(branch)?;
        }
        Ok(())
    }

    /// Removes everything of the job: its worktree (found by its branch; one whose agent
    /// switched branches is removed by [`Repo::remove_worktree`] with its recorded path),
    /// branch and refs.
    pub fn forget(&self, job: &JobKey) -> Result<(), GitError> {
        for worktree in self.job_worktrees()? {
            if worktree.job == job.as_str() {
                self.remove_worktree_dir(&worktree.path)?;
            }
        }
        self.delete_branch(&job.branch())?;
        self.delete_refs(&self.job_refs(job)?)
    }

    /// Our worktrees of this repository: those on a `cli-agent-mcp/<job>` branch.
    pub(crate) fn job_worktrees(&self) -> Result<Vec<JobWorktree>, GitError> {
        let listed = self
            .run()
            .args(["worktree", "list", "--porcelain", "-z"])
            .stdout()?;
        Ok(parse_worktree_list(&String::from_utf8_lossy(&listed)))
    }

    /// Drops git's records of our worktrees whose directories were deleted by hand (their
    /// branches stay); returns them. The user's own worktree records are left alone.
    pub fn prune_missing_worktrees(&self) -> Result<Vec<JobWorktree>, GitError> {
        let missing: Vec<_> = self
            .job_worktrees()?
            .into_iter()
            .filter(|worktree| worktree.missing)
            .collect();
        for worktree in &missing {
            self.remove_worktree_dir(&worktree.path)?;
        }
        Ok(missing)
    }

    fn remove_worktree_dir(&self, path: &Path) -> Result<(), GitError> {
        let removed = self
            .run()
            .args(["worktree", "remove", "--force", "--force"])
            .arg(path)
            .retry_when_busy()
            .output();
        match removed {
            Ok(_) => Ok(()),
            // Not (or no longer) a worktree git knows: remove what is left of a checkout.
            Err(GitError::Failed { stderr, .. }) if stderr.contains("is not a working tree") => {
                remove_checkout_dir(path)
            }
            Err(error) => Err(error),
        }
    }

    fn delete_branch(&self, branch: &str) -> Result<(), GitError> {
        self.delete_refs(&[format!("refs/heads/{branch}")])
    }
}

/// Deletes a directory left by a worktree, only if it looks like one (has a `.git` entry).
fn remove_checkout_dir(path: &Path) -> Result<(), GitError> {
    if !path.join(".git").exists() {
        return Ok(());
    }
    std::fs::remove_dir_all(path).map_err(|error| GitError::io("could not remove", path, error))
}

/// Parses `git worktree list --porcelain -z`: attribute fields, records ended by an empty one.
fn parse_worktree_list(listed: &str) -> Vec<JobWorktree> {
    let mut found = Vec::new();
    let (mut path, mut branch, mut prunable) = (None, None, false);
    for field in listed.split('\0') {
        if let Some(value) = field.strip_prefix("worktree ") {
            path = Some(crate::plain_path::from_git(value));
        } else if let Some(value) = field.strip_prefix("branch ") {
            branch = Some(value.to_owned());
        } else if field.starts_with("prunable") {
            prunable = true;
        } else if field.is_empty() {
            let job = branch.as_deref().and_then(JobKey::of_branch);
            if let (Some(path), Some(job)) = (path.take(), job) {
                found.push(JobWorktree {
                    job: job.as_str().to_owned(),
                    branch: job.branch(),
                    missing: prunable || !path.exists(),
                    path,
                });
            }
            (branch, prunable) = (None, false);
        }
    }
    found
}

/// What a commit made in one of our worktrees writes outside it: the worktree's own git
/// directory (index, HEAD, logs), the shared object store, and the job branches' refs and
/// logs (made here when missing). Read from the `.git` file and `commondir` git writes, so
/// a sandbox can allow exactly these.
pub fn worktree_metadata(top: &Path) -> std::io::Result<Vec<PathBuf>> {
    let link = std::fs::read_to_string(top.join(".git"))?;
    let own = top.join(link.trim().trim_start_matches("gitdir:").trim());
    let common_link = std::fs::read_to_string(own.join("commondir"))?;
    let common = crate::plain_path::canonicalize(&own.join(common_link.trim()))?;
    let branches = Path::new("refs/heads").join(super::job::BRANCH_PREFIX);
    let refs = common.join(&branches);
    let logs = common.join("logs").join(&branches);
    for dir in [&refs, &logs] {
        std::fs::create_dir_all(dir)?;
    }
    Ok(vec![own, common.join("objects"), refs, logs])
}

/// The disk a directory's files take, in bytes (allocated blocks; symbolic links not followed).
pub fn disk_usage(path: &Path) -> u64 {
    let Ok(metadata) = path.symlink_metadata() else {
        return 0;
    };
    let own = crate::platform::disk_bytes(&metadata);
    if !metadata.is_dir() {
        return own;
    }
    let entries = std::fs::read_dir(path).into_iter().flatten().flatten();
    own + entries.map(|entry| disk_usage(&entry.path())).sum::<u64>()
}

/// Undoes a worktree creation that failed part-way, newest step first.
struct Undo<'a> {
    repo: &'a Repo,
    job: &'a JobKey,
    path: &'a Path,
    base_ref: bool,
    branch: bool,
    worktree: bool,
}

impl<'a> Undo<'a> {
    fn new(repo: &'a Repo, job: &'a JobKey, path: &'a Path) -> Self {
        Self {
            repo,
            job,
            path,
            base_ref: false,
            branch: false,
            worktree: false,
        }
    }

    fn disarm(&mut self) {
        (self.base_ref, self.branch, self.worktree) = (false, false, false);
    }
}

impl Drop for Undo<'_> {
    fn drop(&mut self) {
        if self.worktree {
            let _ = self.repo.remove_worktree_dir(self.path);
            // The path did not exist before: whatever is there now is ours.
            let _ = std::fs::remove_dir_all(self.path);
        }
        if self.branch {
            let _ = self.repo.delete_branch(&self.job.branch());
        }
        if self.base_ref
            && let Ok(name) = self.job.snapshot_ref(BASE_LABEL)
        {
            let _ = self.repo.delete_refs(&[name]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktree_list_keeps_ours_only() {
        let listed = "worktree /r\0HEAD aa\0branch refs/heads/main\0\0\
                      worktree /state/w1\0HEAD bb\0branch refs/heads/cli-agent-mcp/job_a\0\0\
                      worktree /state/w2\0HEAD cc\0branch refs/heads/cli-agent-mcp/job_b\0\
                      prunable gitdir file points to non-existent location\0\0\
                      worktree /elsewhere\0HEAD dd\0detached\0\0";
        let ours = parse_worktree_list(listed);
        assert_eq!(ours.len(), 2);
        assert_eq!(ours[0].job, "job_a");
        assert_eq!(ours[1].branch, "cli-agent-mcp/job_b");
        assert!(ours[1].missing);
    }
}
