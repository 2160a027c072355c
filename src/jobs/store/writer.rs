//! The store's one writer thread: commits every recorder's buffer in one transaction at least
//! every 200 ms (a crash loses at most that), at once when a chunk of head is full or someone
//! flushes. What it writes is `chunks.rs`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior};

use super::chunks::write_batch;
use super::id::JobId;
use super::recorder::{JobBuffer, JobLog, SharedBuffer, lock};

/// The longest recorded events wait before they are committed.
const TICK: Duration = Duration::from_millis(200);

pub(super) struct Writer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Each new job's buffer keeps its tail within half of it.
    transcript_max_bytes: u64,
}

struct Shared {
    state: Mutex<State>,
    /// The writer waits on it for work.
    wake: Condvar,
    /// Flushers wait on it for a commit.
    committed: Condvar,
}

#[derive(Default)]
struct State {
    /// Each job's buffer, shared with its recorders.
    buffers: HashMap<JobId, SharedBuffer>,
    /// A buffer got data since the writer last took them.
    pending: bool,
    /// A buffer passed the size that commits at once.
    urgent: bool,
    /// Flushes asked for and done, counted: a flush waits until its number is done.
    flushes_asked: u64,
    flushes_done: u64,
    closing: bool,
    stopped: bool,
}

impl Writer {
    pub fn start(
        conn: Connection,
        path: PathBuf,
        transcript_max_bytes: u64,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            committed: Condvar::new(),
        });
        let mut thread = WriterThread {
            shared: shared.clone(),
            conn,
            path,
            transcript_max_bytes,
            failing: false,
        };
        let handle = std::thread::Builder::new()
            .name("job-store-writer".into())
            .spawn(move || thread.run())?;
        Ok(Self {
            shared,
            thread: Some(handle),
            transcript_max_bytes,
        })
    }

    /// The buffer every recorder of job `id` writes to.
    pub fn buffer(&self, id: &JobId) -> SharedBuffer {
        self.shared
            .lock()
            .buffers
            .entry(id.clone())
            .or_insert_with(|| Arc::new(Mutex::new(JobLog::new(self.transcript_max_bytes))))
            .clone()
    }

    pub fn nudge(&self, urgent: bool) {
        let mut state = self.shared.lock();
        state.pending = true;
        state.urgent |= urgent;
        self.shared.wake.notify_one();
    }

    pub fn flush(&self) {
        let mut state = self.shared.lock();
        state.flushes_asked += 1;
        let mine = state.flushes_asked;
        self.shared.wake.notify_one();
        while state.flushes_done < mine && !state.stopped {
            state = self
                .shared
                .committed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for Writer {
    /// Commits what is left, then ends the thread.
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct WriterThread {
    shared: Arc<Shared>,
    conn: Connection,
    path: PathBuf,
    transcript_max_bytes: u64,
    /// The last commit failed: log the next failure quietly, the recovery loudly.
    failing: bool,
}

/// What one tick takes out of a job's buffer.
type Batch = (JobId, JobBuffer);

impl WriterThread {
    fn run(&mut self) {
        loop {
            let (batches, flush, closing) = self.next_batches();
            self.commit(batches);
            let mut state = self.shared.lock();
            state.flushes_done = flush;
            // A job whose recorders are all gone and whose buffer is empty needs no entry.
            state.buffers.retain(|_, buffer| {
                Arc::strong_count(buffer) > 1 || !lock(buffer).pending.is_empty()
            });
            self.shared.committed.notify_all();
            if closing && !state.pending {
                state.stopped = true;
                self.shared.committed.notify_all();
                return;
            }
        }
    }

    /// Waits for work, then takes every non-empty buffer. Returns the batches, the flush
    /// number they satisfy, and whether the store is closing.
    fn next_batches(&self) -> (Vec<Batch>, u64, bool) {
        let mut state = self.shared.lock();
        let idle = |s: &State| !s.pending && s.flushes_asked == s.flushes_done && !s.closing;
        while idle(&state) {
            state = self
                .shared
                .wake
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let deadline = Instant::now() + TICK;
        let now_please = |s: &State| s.urgent || s.flushes_asked > s.flushes_done || s.closing;
        while !now_please(&state) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .shared
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        // Cleared before the buffers are taken: data arriving after this wakes us again.
        state.pending = false;
        state.urgent = false;
        let flush = state.flushes_asked;
        let closing = state.closing;
        let buffers: Vec<(JobId, SharedBuffer)> = state
            .buffers
            .iter()
            .map(|(id, buffer)| (id.clone(), buffer.clone()))
            .collect();
        drop(state);
        let batches = buffers
            .into_iter()
            .filter_map(|(id, buffer)| {
                let mut log = lock(&buffer);
                (!log.pending.is_empty()).then(|| (id, std::mem::take(&mut log.pending)))
            })
            .collect();
        (batches, flush, closing)
    }

    fn commit(&mut self, mut batches: Vec<Batch>) {
        if batches.is_empty() {
            return;
        }
        let events: u64 = batches.iter().map(|(_, batch)| batch.events()).sum();
        let max = self.transcript_max_bytes;
        let result = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .and_then(|tx| {
                for (id, batch) in &mut batches {
                    write_batch(&tx, id, batch, max)?;
                }
                tx.commit()
            });
        match result {
            Ok(()) if self.failing => {
                self.failing = false;
                tracing::info!(path = %self.path.display(), "the job store takes events again");
            }
            Ok(()) => {}
            Err(error) => {
                let error = super::StoreError::sqlite(&self.path, error);
                if self.failing {
                    tracing::debug!(%error, events, "job events lost");
                } else {
                    tracing::warn!(%error, events, "job events lost: the job store cannot be written");
                }
                self.failing = true;
            }
        }
    }
}
