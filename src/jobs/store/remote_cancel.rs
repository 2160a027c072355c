//! Cancelling a job from outside its server (a shell, the dashboard): ask the owner through
//! the store, then wait a while for it to record the end.

use std::time::{Duration, Instant};

use super::id::JobId;
use super::record::{CancelRequest, JobStatus, Owner};
use super::{Store, StoreError};

/// How long a cancel from outside waits for the owning server to record the job ended.
pub const CANCEL_WAIT: Duration = Duration::from_secs(10);
/// How often the wait looks at the job again.
const POLL: Duration = Duration::from_millis(100);

/// What a cancel from outside the owning server came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteCancel {
    Cancelled,
    /// It ended some other way before the cancel took effect.
    Ended(JobStatus),
    /// The owner was asked and has not recorded the end within the wait.
    NotStopped {
        owner: Owner,
        waited: Duration,
    },
    AlreadyFinished(JobStatus),
    /// Its server is gone: the job is now recorded interrupted.
    OwnerGone {
        pid: u32,
    },
}

impl RemoteCancel {
    /// The result's name in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::Ended(_) => "ended",
            Self::NotStopped { .. } => "not_stopped",
            Self::AlreadyFinished(_) => "already_finished",
            Self::OwnerGone { .. } => "owner_gone",
        }
    }

    /// The job's status as far as the cancel knows.
    pub fn status(self) -> JobStatus {
        match self {
            Self::Cancelled => JobStatus::Cancelled,
            Self::Ended(status) | Self::AlreadyFinished(status) => status,
            Self::NotStopped { .. } => JobStatus::Running,
            Self::OwnerGone { .. } => JobStatus::Interrupted,
        }
    }

    /// What happened, for a person.
    pub fn message(self, id: &JobId) -> String {
        match self {
            Self::Cancelled => format!("job {id} cancelled"),
            Self::Ended(status) => {
                format!("job {id} ended ({status}) before the cancel took effect")
            }
            Self::NotStopped { owner, waited } => format!(
                "asked the server running job {id} (pid {}) to cancel it, and it has not \
                 recorded the job ended within {} s; `cli-agent-mcp jobs show {id}` tells \
                 when it does",
                owner.pid,
                waited.as_secs()
            ),
            Self::AlreadyFinished(status) => {
                format!("job {id} had already ended ({status}): nothing to cancel")
            }
            Self::OwnerGone { pid } => format!(
                "the server that ran job {id} (pid {pid}) is gone: nothing can cancel it; it is \
                 now recorded interrupted"
            ),
        }
    }

    /// The report as JSON: `id`, `result` ([`Self::name`]), `status` and `message`.
    pub fn to_json(self, id: &JobId) -> serde_json::Value {
        serde_json::json!({
            "id": id, "result": self.name(), "status": self.status(), "message": self.message(id),
        })
    }
}

impl Store {
    /// Asks the owning server to cancel job `id` and waits up to `wait` for it to record the
    /// end. Blocks: async callers run it in the blocking pool.
    pub fn cancel_and_wait(&self, id: &JobId, wait: Duration) -> Result<RemoteCancel, StoreError> {
        let pid = self.get(id)?.map_or(0, |job| job.owner.pid);
        let owner = match self.request_cancel(id)? {
            CancelRequest::AlreadyFinished(status) => {
                return Ok(RemoteCancel::AlreadyFinished(status));
            }
            CancelRequest::OwnerGone => return Ok(RemoteCancel::OwnerGone { pid }),
            CancelRequest::Requested { owner } => owner,
        };
        let deadline = Instant::now() + wait;
        loop {
            let status = self.get(id)?.map(|job| job.status);
            match status.filter(|status| status.is_finished()) {
                Some(JobStatus::Cancelled) => return Ok(RemoteCancel::Cancelled),
                Some(status) => return Ok(RemoteCancel::Ended(status)),
                None if Instant::now() >= deadline => {
                    return Ok(RemoteCancel::NotStopped {
                        owner,
                        waited: wait,
                    });
                }
                None => std::thread::sleep(POLL),
            }
        }
    }
}
