//! The server-wide stops: SIGINT cancels every job and the server carries on; a shutdown
//! stops every job (recorded `interrupted`) and lets no new one start.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::jobs::{Jobs, StopReason};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownCause {
    StdinClosed,
    Sigterm,
    Sighup,
    Sigint,
    /// The MCP session ended on its own (a transport error, a broken handshake).
    SessionEnded,
    /// The launcher that started the server died: its pipe (`CAM_PARENT_PIPE`) closed.
    LauncherGone,
}

impl ShutdownCause {
    /// How a job's result names the stop.
    pub fn describe(self) -> &'static str {
        match self {
            Self::StdinClosed => {
                "interrupted: the client closed the connection and the server shut down"
            }
            #[cfg(unix)]
            Self::Sigterm => "interrupted: the server got SIGTERM",
            #[cfg(unix)]
            Self::Sighup => "interrupted: the server got SIGHUP",
            #[cfg(unix)]
            Self::Sigint => "interrupted: the server got SIGINT and shut down",
            #[cfg(windows)]
            Self::Sigterm => "interrupted: the server got Ctrl-Break",
            #[cfg(windows)]
            Self::Sighup => "interrupted: the server's console closed",
            #[cfg(windows)]
            Self::Sigint => "interrupted: the server got Ctrl-C and shut down",
            Self::SessionEnded => "interrupted: the MCP session ended and the server shut down",
            Self::LauncherGone => {
                "interrupted: the launcher that started the server is gone and the server shut down"
            }
        }
    }
}

/// The server-wide shutdown: once triggered, every job is stopped and no new one starts.
#[derive(Clone)]
pub struct Shutdown {
    token: CancellationToken,
    jobs: Arc<Jobs>,
}

impl Shutdown {
    /// `token` must be the parent of every job's token.
    pub fn new(token: CancellationToken, jobs: Arc<Jobs>) -> Self {
        Self { token, jobs }
    }

    /// A shutdown over no jobs, for tests of what triggers one.
    #[cfg(test)]
    pub fn for_tests() -> Self {
        let token = CancellationToken::new();
        let caps = crate::jobs::Caps {
            total: 1,
            per_agent: Default::default(),
            worktrees: 20,
        };
        let jobs = Jobs::new(
            Arc::new(cli_agent_engine::Engine::new(
                cli_agent_engine::EngineConfig::default(),
            )),
            Err("not needed".to_owned()),
            crate::jobs::Scheduler::new(caps),
            tokio_util::task::TaskTracker::new(),
            token.clone(),
        );
        Self::new(token, jobs)
    }

    /// Start the shutdown; the jobs keep the first reason they are given.
    pub fn trigger(&self, cause: ShutdownCause) {
        if !self.token.is_cancelled() {
            tracing::info!(?cause, "shutting down");
        }
        self.jobs.stop_all(StopReason::Shutdown(cause.describe()));
        self.token.cancel();
    }

    pub fn is_triggered(&self) -> bool {
        self.token.is_cancelled()
    }

    pub async fn triggered(&self) {
        self.token.cancelled().await;
    }
}
