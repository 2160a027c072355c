//! Git for delegated runs: snapshots of a workspace's state, what a run changed, worktrees of
//! their own for isolated runs, review diffs, and bringing a job's work in (apply) or taking
//! it out (revert) without losing a byte of the user's.
//!
//! Everything drives the `git` binary synchronously (call it from `spawn_blocking`), never
//! runs the repository's hooks, and never touches the user's index, HEAD, branches, stash or
//! files; apply and revert write the workspace's files only. Our state lives under
//! `refs/cli-agent-mcp/<job>/` and on branches `cli-agent-mcp/<job>`, until [`Repo::forget`].
//!
//! Submodules are recorded as gitlinks (the commit their checkout is at), never entered: their
//! own files are not measured, and apply/revert leave submodule checkouts alone.
//!
//! ```no_run
//! # fn sketch() -> Result<(), cli_agent_engine::git::GitError> {
//! use cli_agent_engine::Base;
//! use cli_agent_engine::git::{BranchFate, JobKey, Mode, Repo};
//! # let (workspace, state_dir) = (std::path::Path::new("."), std::path::Path::new("/tmp"));
//! let job = JobKey::new("job_3k7qmz2xw4abcdef")?;
//! let Some(repo) = Repo::discover(workspace)? else { return Ok(()) }; // Changes::outside_repository
//! let tree = repo.create_worktree(&job, &state_dir.join(job.as_str()), Base::WorkingState)?;
//! // ... run the agent in tree.workdir ...
//! let inside = Repo::discover(&tree.path)?.expect("a worktree is a repository");
//! let after = inside.snapshot(&job, "after")?;
//! let changes = repo.changes(&tree.base, &after)?;
//! if changes.is_empty() && !repo.has_own_commits(&tree)? {
//!     repo.remove_worktree(&tree.path, &tree.branch, BranchFate::Delete)?;
//! }
//! let text = repo.diff(&tree.base, &after, &[] as &[&str])?;
//! repo.apply(&job, &tree.base, &after, Mode::Write)?; // Err(GitError::Conflicts) names files
//! repo.forget(&job)?; // when the job is pruned
//! # Ok(()) }
//! ```

mod changes;
mod diff;
mod error;
mod include;
mod invocation;
mod job;
mod merge;
mod repo;
mod snapshot;
mod temp_index;
mod worktree;

pub use changes::{ChangeKind, Changes, FileChange};
pub use error::{GitError, Operation};
pub use invocation::{Git, Version};
pub use job::JobKey;
pub use merge::{Merged, Mode};
pub use repo::{Repo, not_tracked_reason};
pub use snapshot::{KeptIndex, Snapshot};
pub use worktree::{BranchFate, JobWorktree, Worktree, disk_usage, worktree_metadata};

// On real repositories with the git on PATH: Git for Windows on a Windows runner too, where
// the tests of hooks, symbolic links and file modes are left out.
#[cfg(test)]
mod tests;
