//! What happened to this server's jobs, told to whoever listens (the MCP resource
//! subscriptions): a job was added, or its status or answer changed.

use tokio::sync::broadcast;

use super::store::JobId;

/// How many changes a slow listener may fall behind before it is told it lagged.
const BACKLOG: usize = 256;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobChange {
    /// A job was recorded: the list of jobs changed.
    Added(JobId),
    /// A job started running or ended.
    Updated(JobId),
}

pub(super) struct ChangeFeed(broadcast::Sender<JobChange>);

impl Default for ChangeFeed {
    fn default() -> Self {
        Self(broadcast::channel(BACKLOG).0)
    }
}

impl ChangeFeed {
    /// Nobody listening is fine: a change is news, not a record.
    pub(super) fn send(&self, change: JobChange) {
        let _ = self.0.send(change);
    }

    pub(super) fn subscribe(&self) -> broadcast::Receiver<JobChange> {
        self.0.subscribe()
    }
}
