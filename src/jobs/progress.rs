//! What a job is doing now, in one line: "running `cargo test`", "queued, position 3".
//!
//! The engine's observer calls [`JobProgress::observe`] for every event, so it only rewrites
//! the line it keeps and wakes its one watcher, the progress reporter of the call that waits on
//! the job (or of a `job_wait`); the others (`job_wait`, the store's copy, a hand-off) read the
//! latest line when they need it.

use std::sync::{Arc, Mutex, MutexGuard};

use cli_agent_engine::AgentEvent;
use tokio::sync::Notify;

/// Cheap to clone; every clone is the same line.
#[derive(Clone, Default)]
pub struct JobProgress {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    line: Mutex<Option<String>>,
    changed: Notify,
}

impl JobProgress {
    /// Record what the latest of `events` that says anything says the run is doing. Only that
    /// one is described: a burst comes in batches of hundreds, and each would overwrite the
    /// line the one before wrote.
    pub fn observe(&self, events: &[AgentEvent]) {
        let Some(event) = events.iter().rev().find(|event| event.has_line()) else {
            return;
        };
        let mut latest = self.lock();
        let changed = match &mut *latest {
            Some(line) => event.describe_into(line),
            None => {
                *latest = event.describe();
                latest.is_some()
            }
        };
        drop(latest);
        if changed {
            self.inner.changed.notify_one();
        }
    }

    /// Replace the line outright (the queue's position, a state change).
    pub fn set(&self, line: String) {
        *self.lock() = Some(line);
        self.inner.changed.notify_one();
    }

    pub fn line(&self) -> Option<String> {
        self.lock().clone()
    }

    /// Resolves at the next change (or at once if one came since the last wait ended). One
    /// watcher at a time: a change wakes one waiter.
    pub async fn changed(&self) {
        self.inner.changed.notified().await;
    }

    fn lock(&self) -> MutexGuard<'_, Option<String>> {
        self.inner
            .line
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
