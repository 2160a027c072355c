//! The engine's front door: [`Engine`] takes a run through the stages of [`crate::run`], one
//! call per stage a caller acts between: prepare a request (refuse a bad one at once), place
//! it in its tree, then run it to its outcome.

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::config::EngineConfig;
use crate::error::SetupError;
use crate::git::JobKey;
use crate::outcome::Outcome;
use crate::request::RunRequest;
use crate::run::launch::launch;
use crate::run::place::place;
use crate::run::prepare::prepare;
use crate::run::sessions::Sessions;
use crate::run::settle::settle;
use crate::run::supervise::supervise;
use crate::run::{Observer, Placed, Prepared};

/// Runs agents' CLIs headless, each in a process tree of its own that is gone when its run
/// returns. One engine serves any number of concurrent runs, which share only its settings and
/// the ledger of the sessions they started (where each started, its cumulative usage).
pub struct Engine {
    config: EngineConfig,
    sessions: Sessions,
}

impl Engine {
    /// An engine with these settings and no sessions yet.
    pub fn new(config: EngineConfig) -> Self {
        Self {
            config,
            sessions: Sessions::default(),
        }
    }

    /// Its settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Runs `request` with `agent` to its end, where the request says and measuring nothing:
    /// [`Engine::prepare`], then [`Engine::run_placed`].
    pub async fn run(
        &self,
        agent: Agent,
        request: RunRequest,
        cancel: CancellationToken,
        observer: Observer<'_>,
    ) -> Result<Outcome, SetupError> {
        let prepared = self.prepare(agent, request)?;
        self.run_placed(Placed::as_is(prepared), cancel, observer)
            .await
    }

    /// Checks a request and builds its command line without starting anything, so that a
    /// caller can refuse a bad request at once and start (or queue) a good one.
    pub fn prepare(&self, agent: Agent, request: RunRequest) -> Result<Prepared, SetupError> {
        prepare(&self.config, &self.sessions, agent, request)
    }

    /// Places a prepared run in its tree: takes the "before" snapshot of a run that may write
    /// and, for an isolated run, makes its worktree and moves the run there. `job` names the
    /// refs and the branch; worktrees go under `worktrees`.
    pub async fn place(
        &self,
        prepared: Prepared,
        job: JobKey,
        worktrees: PathBuf,
    ) -> Result<Placed, SetupError> {
        place(prepared, job, worktrees).await
    }

    /// Starts a placed run and supervises it to its outcome. `cancel` stops it (the whole tree
    /// is torn down before this returns); `observer` sees every event as it is parsed, in
    /// batches. An error means the CLI never started, and nothing of the run is left.
    pub async fn run_placed(
        &self,
        placed: Placed,
        cancel: CancellationToken,
        observer: Observer<'_>,
    ) -> Result<Outcome, SetupError> {
        let launched = launch(placed, &self.config, &cancel).await?;
        let ran = supervise(launched, &self.config, &cancel, observer).await;
        Ok(settle(ran, &self.config, &self.sessions, &cancel).await)
    }
}
