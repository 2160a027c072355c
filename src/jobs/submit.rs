//! The one road of every run: whichever door it comes through (an agent tool's call, `run` at
//! a shell, a resumed session, a call that waited on the person), a run is submitted here
//! once, to be prepared and checked against its tree now, then recorded, queued, placed, run
//! and finished as a job (see [`Jobs`]).

use std::sync::Arc;

use cli_agent_engine::{Agent, RunRequest, SetupError};

use super::job::Job;
use super::manager::{JobOptions, Jobs};
use super::store::{JobId, Origin};
use super::trees::TreeRefusal;

/// A run asked for, and what its asker wants of the job around it.
pub struct Submission {
    pub agent: Agent,
    pub run: RunRequest,
    pub origin: Origin,
    pub options: JobOptions,
}

/// Why a run was not taken: nothing of it was recorded, nothing started.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("the server is shutting down; call again once it is back")]
    ShuttingDown,
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Tree(#[from] TreeRefusal),
}

impl Jobs {
    /// Take `submission` as job `id` (fresh from [`JobId::random`]): prepared and its tree
    /// checked now, then recorded (its id resolves once this returns) and started, or queued,
    /// in a task of its own.
    pub async fn submit(
        self: &Arc<Self>,
        id: JobId,
        submission: Submission,
    ) -> Result<Arc<Job>, Refused> {
        if self.shutting_down() {
            return Err(Refused::ShuttingDown);
        }
        let Submission {
            agent,
            run,
            origin,
            options,
        } = submission;
        let prepared = self.engine().prepare(agent, run)?;
        self.check_tree(prepared.request()).await?;
        Ok(self.start(id, prepared, origin, options).await)
    }
}
