//! What every job tool shares: what it needs of the server, its errors, and the helpers for
//! job ids and blocking work. The tools and their dispatch ([`super::job`]) build on it.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::jobs::review::ReviewError;
use crate::jobs::store::{BadJobId, JobId};
use crate::jobs::{JobProgress, Jobs, JobsError};

#[derive(Debug, thiserror::Error)]
pub enum JobToolError {
    #[error("invalid arguments for {tool}: {source}. Its inputSchema lists what it takes")]
    Invalid {
        tool: &'static str,
        source: serde_json::Error,
    },
    #[error(transparent)]
    BadId(#[from] BadJobId),
    #[error("job_wait takes 1 to {max} job ids; it got {got}")]
    WaitCount { got: usize, max: usize },
    #[error(transparent)]
    Jobs(#[from] JobsError),
    #[error("{0}")]
    BadStatus(String),
    #[error(transparent)]
    Review(#[from] ReviewError),
}

/// What a job tool needs of the server.
pub struct JobToolContext<'a> {
    pub jobs: &'a Arc<Jobs>,
    pub budget: usize,
    /// Fired when the client cancels the call.
    pub cancelled: &'a CancellationToken,
    /// Where `job_wait` reports how the wait goes.
    pub progress: JobProgress,
}

/// Runs blocking work (git, the store) off the runtime's threads.
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ReviewError> + Send + 'static,
) -> Result<T, JobToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| JobToolError::BadStatus(format!("internal error: {error}")))?
        .map_err(JobToolError::Review)
}

pub(super) fn parse_id(text: &str) -> Result<JobId, JobToolError> {
    text.trim().parse().map_err(JobToolError::BadId)
}
