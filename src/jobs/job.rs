//! A job while this server runs it: its id, where it is in its life, what it is doing, and the
//! means to stop it. The durable record is the store's; this is what waiting and cancelling
//! need without a round trip to it.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

use cli_agent_engine::{Agent, Outcome};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::progress::JobProgress;
use super::store::{JobId, JobStatus};

/// Why a job was stopped before it ended on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The client cancelled the blocking call, before any hand-off.
    CallCancelled,
    /// `job_cancel`, or `cli-agent-mcp jobs cancel` from a shell.
    JobCancel,
    /// SIGINT while serving: the server carries on.
    Sigint,
    /// The server is going away: the job is recorded `interrupted`.
    Shutdown(&'static str),
    /// A signal to `run`, as it describes the stop.
    Signalled(&'static str),
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            Self::CallCancelled => "cancelled by the client",
            Self::JobCancel => "cancelled with job_cancel",
            Self::Sigint => "cancelled by SIGINT; the server carries on",
            Self::Shutdown(why) | Self::Signalled(why) => why,
        }
    }

    /// What the caller can do about it.
    pub fn hint(self) -> Option<&'static str> {
        match self {
            Self::CallCancelled | Self::JobCancel | Self::Signalled(_) => None,
            Self::Sigint => Some("call again to retry"),
            Self::Shutdown(_) => Some(
                "call again once the server is back; pass the session_id, if there is one, to \
                 continue where it stopped",
            ),
        }
    }
}

/// What the person must allow on the dashboard before a job may start: a call past the
/// server's bounds that nobody could be asked about through the client.
#[derive(Debug)]
pub struct AskFirst {
    /// The question, as the person reads it.
    pub question: String,
    /// The bounds it goes past, in the person's words: the job's `allowed_past` once allowed.
    pub bounds: String,
    /// The refusal the call gets if the person does not allow it.
    pub refusal: String,
}

/// A finished job: its status and outcome.
#[derive(Clone, Debug)]
pub struct Finished {
    pub status: JobStatus,
    pub outcome: Outcome,
}

#[derive(Clone, Debug)]
pub enum JobState {
    Queued,
    Running,
    Finished(Arc<Finished>),
}

pub struct Job {
    pub id: JobId,
    pub agent: Agent,
    pub progress: JobProgress,
    /// When the job was created, on the wall clock (MCP Tasks report it).
    pub created_at: SystemTime,
    created: Instant,
    cancel: CancellationToken,
    stop: OnceLock<StopReason>,
    state: watch::Sender<JobState>,
    /// The question it waits on the person to answer on the dashboard, while it does.
    waiting_for: Mutex<Option<String>>,
}

impl Job {
    pub fn new(id: JobId, agent: Agent, cancel: CancellationToken) -> Self {
        Self {
            id,
            agent,
            progress: JobProgress::default(),
            created_at: SystemTime::now(),
            created: Instant::now(),
            cancel,
            stop: OnceLock::new(),
            state: watch::Sender::new(JobState::Queued),
            waiting_for: Mutex::default(),
        }
    }

    /// Stop the job; the first reason given is the one it keeps.
    pub fn stop(&self, reason: StopReason) {
        let _ = self.stop.set(reason);
        self.cancel.cancel();
    }

    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop.get().copied()
    }

    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    pub fn state(&self) -> JobState {
        self.state.borrow().clone()
    }

    /// The question it waits on the person to answer on the dashboard, if it waits.
    pub fn waiting_for(&self) -> Option<String> {
        self.waiting_for
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Starts or stops waiting on the person; the progress line says which.
    pub(super) fn set_waiting_for(&self, question: Option<&str>) {
        let line = match question {
            Some(question) => format!(
                "waiting for the person to answer on the dashboard: {}",
                question.lines().next().unwrap_or_default()
            ),
            None => "the person's answer taken; running on".to_owned(),
        };
        *self
            .waiting_for
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = question.map(str::to_owned);
        self.progress.set(line);
    }

    pub fn elapsed(&self) -> Duration {
        self.created.elapsed()
    }

    pub(super) fn set_state(&self, state: JobState) {
        self.state.send_replace(state);
    }

    /// Wait for the job's end.
    pub async fn finished(&self) -> Arc<Finished> {
        let mut state = self.state.subscribe();
        loop {
            if let JobState::Finished(finished) = &*state.borrow_and_update() {
                return finished.clone();
            }
            // The sender lives in `self`, so the channel cannot close while we wait.
            let _ = state.changed().await;
        }
    }
}
