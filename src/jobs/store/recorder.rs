//! A job's event recorder: called for every event from the run's synchronous observer, so it
//! only serializes into a buffer; the store's writer thread commits it (see `writer.rs`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cli_agent_engine::AgentEvent;

use super::Store;

/// A buffer this large is committed at once rather than at the next tick.
pub(super) const URGENT_BYTES: usize = 256 * 1024;

/// What a job's recorders gathered since the writer last took it.
#[derive(Debug, Default)]
pub(super) struct JobBuffer {
    /// Events as JSON lines.
    pub lines: Vec<u8>,
    pub events: u64,
    pub progress: Option<String>,
    /// The session the CLI announced.
    pub session_id: Option<String>,
}

impl JobBuffer {
    pub fn is_empty(&self) -> bool {
        self.events == 0 && self.progress.is_none() && self.session_id.is_none()
    }
}

pub(super) type SharedBuffer = Arc<Mutex<JobBuffer>>;

pub(super) fn lock(buffer: &Mutex<JobBuffer>) -> MutexGuard<'_, JobBuffer> {
    // A panic while holding it leaves at worst a half-written line behind: keep going.
    buffer.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Records one job's events and progress. Cheap to call: never waits on SQLite.
pub struct Recorder {
    store: Store,
    buffer: SharedBuffer,
}

impl Recorder {
    pub(super) fn new(store: Store, buffer: SharedBuffer) -> Self {
        Self { store, buffer }
    }

    pub fn event(&self, event: &AgentEvent) {
        let mut buffer = lock(&self.buffer);
        let was_empty = buffer.is_empty();
        let before = buffer.lines.len();
        if serde_json::to_writer(&mut buffer.lines, event).is_err() {
            // Writing into a Vec fails only on a value JSON cannot hold: drop the event.
            buffer.lines.truncate(before);
            return;
        }
        buffer.lines.push(b'\n');
        buffer.events += 1;
        if let AgentEvent::SessionStarted { session_id, .. } = event {
            buffer.session_id = Some(session_id.clone());
        }
        let crossed = before < URGENT_BYTES && buffer.lines.len() >= URGENT_BYTES;
        drop(buffer);
        self.nudge(was_empty, crossed);
    }

    /// The job's last progress line, kept in its row.
    pub fn progress(&self, line: &str) {
        let mut buffer = lock(&self.buffer);
        let was_empty = buffer.is_empty();
        buffer.progress = Some(line.to_owned());
        drop(buffer);
        self.nudge(was_empty, false);
    }

    /// Blocks until everything recorded so far is committed (or could not be: the writer logs
    /// why). Call it before [`Store::finish`].
    pub fn flush(&self) {
        self.store.writer().flush();
    }

    /// Only the first data since the last commit (which starts the writer's 200 ms clock) and
    /// a buffer passing [`URGENT_BYTES`] wake the writer: a wake-up costs a system call.
    fn nudge(&self, was_empty: bool, urgent: bool) {
        if was_empty || urgent {
            self.store.writer().nudge(urgent);
        }
    }
}
