//! The store's one writer thread: commits every recorder's buffer in one transaction at least
//! every 200 ms (a crash loses at most that), at once when a buffer passes 256 KiB or someone
//! flushes. Events go in as chunks, one row per job per batch, under the transcript size cap.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::id::JobId;
use super::recorder::{JobBuffer, SharedBuffer, URGENT_BYTES, lock};

/// The longest recorded events wait before they are committed.
const TICK: Duration = Duration::from_millis(200);

pub(super) struct Writer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
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
        })
    }

    /// The buffer every recorder of job `id` writes to.
    pub fn buffer(&self, id: &JobId) -> SharedBuffer {
        self.shared
            .lock()
            .buffers
            .entry(id.clone())
            .or_default()
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
            self.commit(&batches);
            let mut state = self.shared.lock();
            state.flushes_done = flush;
            // A job whose recorders are all gone and whose buffer is empty needs no entry.
            state
                .buffers
                .retain(|_, buffer| Arc::strong_count(buffer) > 1 || !lock(buffer).is_empty());
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
                let mut buffer = lock(&buffer);
                (!buffer.is_empty()).then(|| (id, std::mem::take(&mut *buffer)))
            })
            .collect();
        (batches, flush, closing)
    }

    fn commit(&mut self, batches: &[Batch]) {
        if batches.is_empty() {
            return;
        }
        let max = self.transcript_max_bytes;
        let result = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .and_then(|tx| {
                for (id, batch) in batches {
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
                let events: u64 = batches.iter().map(|(_, batch)| batch.events).sum();
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

fn write_batch(tx: &Transaction, id: &JobId, batch: &JobBuffer, max: u64) -> rusqlite::Result<()> {
    if batch.progress.is_some() || batch.session_id.is_some() {
        tx.prepare_cached(
            "UPDATE jobs SET progress = coalesce(?2, progress), session_id = coalesce(?3, session_id)
             WHERE id = ?1",
        )?
        .execute(params![id.as_str(), batch.progress, batch.session_id])?;
    }
    for piece in pieces(&batch.lines) {
        append_chunk(tx, id, piece, max)?;
    }
    Ok(())
}

/// The lines cut into chunks of about [`URGENT_BYTES`] at most (a longer line makes a chunk
/// of its own), so the size cap drops the middle in small steps.
fn pieces(mut lines: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        if lines.is_empty() {
            return None;
        }
        let end = if lines.len() <= URGENT_BYTES {
            lines.len()
        } else {
            // After the last line that ends within the size, else after the first line.
            lines[..URGENT_BYTES]
                .iter()
                .rposition(|&b| b == b'\n')
                .or_else(|| lines.iter().position(|&b| b == b'\n'))
                .map_or(lines.len(), |at| at + 1)
        };
        let (piece, rest) = lines.split_at(end);
        lines = rest;
        Some(piece)
    })
}

/// Adds whole JSON lines as one chunk, then drops the oldest chunks after the head while the
/// job holds more than `max` bytes. The newest chunk always stays.
fn append_chunk(tx: &Transaction, id: &JobId, lines: &[u8], max: u64) -> rusqlite::Result<()> {
    let counts: Option<(u64, u64, u64, u64)> = tx
        .prepare_cached(
            "SELECT events, event_bytes, dropped_events, dropped_bytes FROM jobs WHERE id = ?1",
        )?
        .query_row([id.as_str()], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })
        .optional()?;
    let Some((events, bytes, mut dropped_events, mut dropped_bytes)) = counts else {
        // Never inserted, or pruned since: nothing to attach the events to.
        tracing::debug!(job = %id, "events of an unknown job dropped");
        return Ok(());
    };
    let first = events + dropped_events;
    let count = lines.iter().filter(|&&b| b == b'\n').count() as u64;
    let size = lines.len() as u64;
    let head = bytes + dropped_bytes < max / 2;
    // serde_json writes UTF-8: bound as text as it is, without checking it again.
    let text = ToSqlOutput::Borrowed(ValueRef::Text(lines));
    tx.prepare_cached(
        "INSERT INTO chunks (job_id, first_event, events, bytes, head, lines)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![id.as_str(), first, count, size, head, text])?;
    let mut kept_events = events + count;
    let mut kept_bytes = bytes + size;
    while kept_bytes > max {
        let oldest: Option<(u64, u64, u64)> = tx
            .prepare_cached(
                "SELECT first_event, events, bytes FROM chunks
                 WHERE job_id = ?1 AND head = 0 AND first_event < ?2
                 ORDER BY first_event LIMIT 1",
            )?
            .query_row(params![id.as_str(), first], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .optional()?;
        let Some((oldest_first, oldest_events, oldest_bytes)) = oldest else {
            break;
        };
        tx.prepare_cached("DELETE FROM chunks WHERE job_id = ?1 AND first_event = ?2")?
            .execute(params![id.as_str(), oldest_first])?;
        kept_events -= oldest_events;
        kept_bytes -= oldest_bytes;
        dropped_events += oldest_events;
        dropped_bytes += oldest_bytes;
    }
    tx.prepare_cached(
        "UPDATE jobs SET events = ?2, event_bytes = ?3, dropped_events = ?4, dropped_bytes = ?5
         WHERE id = ?1",
    )?
    .execute(params![
        id.as_str(),
        kept_events,
        kept_bytes,
        dropped_events,
        dropped_bytes
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cut_whole_lines_of_bounded_size_and_rejoin() {
        let short = "x".repeat(1000);
        let long = "y".repeat(URGENT_BYTES * 2);
        let lines: String = (0..1000)
            .map(|i| {
                if i == 500 {
                    format!("{long}\n")
                } else {
                    format!("{short}\n")
                }
            })
            .collect();
        let cut: Vec<&[u8]> = pieces(lines.as_bytes()).collect();
        assert!(cut.len() > 4);
        assert_eq!(cut.concat(), lines.as_bytes());
        for piece in &cut {
            assert!(piece.ends_with(b"\n"));
            let one_line = piece.iter().filter(|&&b| b == b'\n').count() == 1;
            assert!(piece.len() <= URGENT_BYTES || one_line, "{}", piece.len());
        }
    }
}
