//! The second stage: a prepared run put in its tree. A run that may write, in git, is measured
//! from a "before" snapshot taken now; an isolated run gets a worktree of its own and works
//! there. What the run changed is settled here too, once it has ended. The git work blocks:
//! it runs off the runtime's threads.

use std::path::PathBuf;

use crate::agent::Agent;
use crate::error::SetupError;
use crate::git::{JobKey, Worktree};
use crate::isolation::{RunTree, Tracking, TreeError, TreeOutcome, TreePlan};
use crate::request::RunRequest;

use super::prepare::Prepared;

/// A prepared run in its tree, ready to start ([`crate::Engine::run_placed`]).
#[derive(Debug)]
pub struct Placed {
    pub(super) prepared: Prepared,
    pub(super) tree: Tree,
}

/// Where a placed run works, and how what it changes is known.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per run, held in place for its length: boxing would buy nothing"
)]
pub(super) enum Tree {
    /// Nothing is measured: a read-only run in place, or a run its caller did not place
    /// ([`Placed::as_is`]).
    Unmeasured,
    /// Outside git: the reason the outcome's changes give.
    NotTracked(String),
    /// Measured against a "before" snapshot, in place or in a worktree of its own; `job`
    /// names its refs and branch.
    Tracked { job: JobKey, tree: RunTree },
}

impl Placed {
    /// A prepared run where its request says, nothing measured: for a caller that keeps no
    /// record of trees ([`crate::Engine::run`]).
    pub(crate) fn as_is(prepared: Prepared) -> Self {
        Self {
            prepared,
            tree: Tree::Unmeasured,
        }
    }

    /// The agent that runs it.
    pub fn agent(&self) -> Agent {
        self.prepared.agent
    }

    /// The request, its workspace the run's tree (an isolated run's worktree).
    pub fn request(&self) -> &RunRequest {
        &self.prepared.request
    }

    /// The run's tree, when it is measured (a run that may write, in git) or isolated.
    pub fn tree(&self) -> Option<&RunTree> {
        match &self.tree {
            Tree::Tracked { tree, .. } => Some(tree),
            Tree::Unmeasured | Tree::NotTracked(_) => None,
        }
    }
}

/// Places `prepared` in its tree: takes the "before" snapshot of a run that may write and,
/// for an isolated run, makes its worktree and moves the run there. `job` names the refs and
/// the branch; worktrees go under `worktrees`.
pub(crate) async fn place(
    mut prepared: Prepared,
    job: JobKey,
    worktrees: PathBuf,
) -> Result<Placed, SetupError> {
    let request = &prepared.request;
    let plan = TreePlan {
        isolation: request.isolation,
        base: request.base,
        job: job.clone(),
        worktrees,
    };
    let (workspace, permission) = (request.workspace.clone(), request.permission);
    let tracking = tokio::task::spawn_blocking(move || plan.begin(&workspace, permission))
        .await
        .map_err(|error| TreeError::Internal(error.to_string()))??;
    let tree = match tracking {
        Tracking::Off => Tree::Unmeasured,
        Tracking::NotTracked(reason) => Tree::NotTracked(reason),
        Tracking::Tracked(tree) => {
            if let Some(workdir) = tree.workdir() {
                prepared.request.workspace = workdir.to_owned();
            }
            Tree::Tracked { job, tree }
        }
    };
    Ok(Placed { prepared, tree })
}

impl Tree {
    /// The worktree of an isolated run.
    pub(super) fn worktree(&self) -> Option<&Worktree> {
        match self {
            Self::Tracked { tree, .. } => tree.worktree.as_ref(),
            Self::Unmeasured | Self::NotTracked(_) => None,
        }
    }

    /// What the run changed, and a warning when that cannot be measured: the warning says
    /// why, and an isolated run's worktree stays for review. The run's answer stands either
    /// way. An isolated run that changed nothing has its worktree removed.
    pub(super) async fn settle(self) -> (Option<TreeOutcome>, Option<String>) {
        let (job, tree) = match self {
            Self::Unmeasured => return (None, None),
            Self::NotTracked(reason) => return (Some(TreeOutcome::not_tracked(reason)), None),
            Self::Tracked { job, tree } => (job, tree),
        };
        let kept = tree.clone();
        let settled =
            tokio::task::spawn_blocking(move || tree.settle(&job).map_err(|e| e.to_string()))
                .await
                .unwrap_or_else(|error| Err(error.to_string()));
        match settled {
            Ok(outcome) => (Some(outcome), None),
            Err(error) => {
                let warning = match &kept.worktree {
                    Some(worktree) => format!(
                        "could not measure what the run changed ({error}); its worktree {} \
                         (branch {}) is kept for review",
                        worktree.path.display(),
                        worktree.branch
                    ),
                    None => format!("could not measure what the run changed: {error}"),
                };
                (Some(TreeOutcome::unmeasured(kept)), Some(warning))
            }
        }
    }
}
