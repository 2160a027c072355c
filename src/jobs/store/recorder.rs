//! A job's event recorder: called for every batch of events from the run's synchronous
//! observer, so it only serializes into a buffer; the store's writer thread commits it (see
//! `writer.rs`).
//!
//! The buffer is cut into chunks of whole lines as it fills, so the writer stores them as
//! they are. Once a job has recorded the head half of its transcript cap, the size cap keeps
//! only the newest half of the rest: lines that a burst pushes out of that half before the
//! writer's next commit are dropped here, counted, and never written just to be deleted.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cli_agent_engine::AgentEvent;

use super::Store;

/// A chunk this large is closed; a buffer of this much head is committed at once rather than
/// at the next tick.
pub(super) const CHUNK_BYTES: usize = 256 * 1024;
/// A new chunk's room: its last line passes [`CHUNK_BYTES`], and growing it would copy it.
const CHUNK_ROOM: usize = CHUNK_BYTES + 16 * 1024;

/// Whole JSON lines, stored as one row.
#[derive(Debug, Default)]
pub(super) struct Chunk {
    pub lines: Vec<u8>,
    pub events: u64,
    /// The job's recorded bytes before this chunk: a chunk starting in the first half of the
    /// cap belongs to the head, which is never dropped.
    start: u64,
}

/// What a job's recorders gathered since the writer last took it.
#[derive(Debug, Default)]
pub(super) struct JobBuffer {
    pub chunks: Vec<Chunk>,
    /// Lines dropped from the tail before they were committed.
    pub dropped_events: u64,
    pub dropped_bytes: u64,
    pub progress: Option<String>,
    /// The session the CLI announced.
    pub session_id: Option<String>,
}

impl JobBuffer {
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
            && self.dropped_events == 0
            && self.progress.is_none()
            && self.session_id.is_none()
    }

    pub fn events(&self) -> u64 {
        self.chunks.iter().map(|chunk| chunk.events).sum()
    }
}

/// One job's buffer with what outlives the writer's takes: how much the job recorded.
#[derive(Debug)]
pub(super) struct JobLog {
    pub pending: JobBuffer,
    recorded: u64,
    /// Half the transcript cap: the head's size and the newest tail kept.
    half: u64,
    /// A dropped chunk's buffer, reused for the next: a burst would otherwise allocate (and
    /// fault in) a fresh one for every chunk it drops.
    spare: Option<Vec<u8>>,
}

impl JobLog {
    pub fn new(transcript_max_bytes: u64) -> Self {
        Self {
            pending: JobBuffer::default(),
            recorded: 0,
            half: transcript_max_bytes / 2,
            spare: None,
        }
    }

    /// Appends one event; true when a full chunk of head waits for a commit.
    fn append(&mut self, event: &AgentEvent) -> bool {
        let opened = self.open_chunk();
        let chunks = &mut self.pending.chunks;
        let last = chunks.len() - 1;
        let chunk = &mut chunks[last];
        let before = chunk.lines.len();
        if serde_json::to_writer(&mut chunk.lines, event).is_err() {
            // Into a Vec, of plain fields: it cannot fail, but half a line must not be stored.
            chunk.lines.truncate(before);
            return false;
        }
        chunk.lines.push(b'\n');
        chunk.events += 1;
        self.recorded += (chunk.lines.len() - before) as u64;
        if let AgentEvent::SessionStarted { session_id, .. } = event {
            self.pending.session_id = Some(session_id.clone());
        }
        // Trimming and urgency change only when a chunk closes: per event, they would cost
        // a walk over the chunks.
        if opened {
            self.drop_old_tail();
        }
        opened && self.pending.chunks.len() > 1 && self.in_head()
    }

    fn in_head(&self) -> bool {
        self.pending
            .chunks
            .first()
            .is_some_and(|chunk| chunk.start < self.half)
    }

    /// Starts a chunk unless the last one has room; true if it did.
    fn open_chunk(&mut self) -> bool {
        let chunks = &mut self.pending.chunks;
        let full = chunks
            .last()
            .is_none_or(|last| last.lines.len() >= CHUNK_BYTES);
        if full {
            let mut lines = self
                .spare
                .take()
                .unwrap_or_else(|| Vec::with_capacity(CHUNK_ROOM));
            lines.clear();
            chunks.push(Chunk {
                lines,
                events: 0,
                start: self.recorded,
            });
        }
        full
    }

    /// Drops the oldest tail chunks while the newer ones alone hold half the cap: the writer
    /// would delete them at the commit anyway. The newest chunk always stays.
    fn drop_old_tail(&mut self) {
        let chunks = &mut self.pending.chunks;
        let Some(first_tail) = chunks.iter().position(|chunk| chunk.start >= self.half) else {
            return;
        };
        let mut newer: u64 = chunks[first_tail..]
            .iter()
            .map(|chunk| chunk.lines.len() as u64)
            .sum();
        let mut end = first_tail;
        while end + 1 < chunks.len() {
            let oldest = chunks[end].lines.len() as u64;
            // Keep more than half: with the head, that passes the cap, so the writer deletes
            // every older tail chunk and the dropped middle stays one gap.
            if newer - oldest <= self.half {
                break;
            }
            newer -= oldest;
            end += 1;
        }
        for dropped in chunks.drain(first_tail..end) {
            self.pending.dropped_events += dropped.events;
            self.pending.dropped_bytes += dropped.lines.len() as u64;
            self.spare = Some(dropped.lines);
        }
    }
}

pub(super) type SharedBuffer = Arc<Mutex<JobLog>>;

pub(super) fn lock(buffer: &Mutex<JobLog>) -> MutexGuard<'_, JobLog> {
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

    pub fn events(&self, events: &[AgentEvent]) {
        let mut log = lock(&self.buffer);
        let was_empty = log.pending.is_empty();
        let mut urgent = false;
        for event in events {
            urgent |= log.append(event);
        }
        drop(log);
        self.nudge(was_empty, urgent);
    }

    /// The job's last progress line, kept in its row.
    pub fn progress(&self, line: &str) {
        let mut log = lock(&self.buffer);
        let was_empty = log.pending.is_empty();
        log.pending.progress = Some(line.to_owned());
        drop(log);
        self.nudge(was_empty, false);
    }

    /// Blocks until everything recorded so far is committed (or could not be: the writer logs
    /// why). Call it before [`Store::finish`].
    pub fn flush(&self) {
        self.store.writer().flush();
    }

    /// Only the first data since the last commit (which starts the writer's 200 ms clock) and
    /// a head passing [`CHUNK_BYTES`] wake the writer: a wake-up costs a system call. A tail
    /// waits for the tick, bounded by the cap.
    fn nudge(&self, was_empty: bool, urgent: bool) {
        if was_empty || urgent {
            self.store.writer().nudge(urgent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(buffer: &JobBuffer) -> u64 {
        buffer
            .chunks
            .iter()
            .map(|chunk| chunk.lines.len() as u64)
            .sum()
    }

    fn text(size: usize) -> AgentEvent {
        AgentEvent::Text {
            text: "x".repeat(size),
            delta: false,
        }
    }

    #[test]
    fn a_burst_past_the_head_keeps_the_head_and_half_the_cap_of_newest_lines() {
        let mut log = JobLog::new(4 * CHUNK_BYTES as u64);
        let line = text(1000);
        let mut recorded = 0;
        while log.recorded < 20 * CHUNK_BYTES as u64 {
            log.append(&line);
            recorded += 1;
        }
        let pending = &log.pending;
        let head: u64 = pending
            .chunks
            .iter()
            .filter(|chunk| chunk.start < log.half)
            .map(|chunk| chunk.lines.len() as u64)
            .sum();
        let tail = bytes(pending) - head;
        assert!(head >= log.half, "the head is whole: {head}");
        assert!(
            tail > log.half && tail <= log.half + CHUNK_BYTES as u64,
            "half the cap of tail, within a chunk: {tail}"
        );
        assert_eq!(pending.events() + pending.dropped_events, recorded);
        assert_eq!(
            bytes(pending) + pending.dropped_bytes,
            log.recorded,
            "every byte kept or counted"
        );
    }

    #[test]
    fn chunks_hold_whole_lines_and_a_long_line_stays_whole() {
        let mut log = JobLog::new(u64::MAX);
        for size in [10, CHUNK_BYTES * 2, 10, 10] {
            log.append(&text(size));
        }
        let chunks = &log.pending.chunks;
        assert_eq!(chunks.len(), 2, "the long line closed the first chunk");
        for chunk in chunks {
            assert!(chunk.lines.ends_with(b"\n"));
        }
        assert_eq!(log.pending.events(), 4);
    }

    #[test]
    fn the_newest_chunk_stays_however_long() {
        let mut log = JobLog::new(2 * CHUNK_BYTES as u64);
        for _ in 0..3 {
            log.append(&text(CHUNK_BYTES * 4));
        }
        let last = log.pending.chunks.last().expect("a chunk");
        assert!(last.lines.len() > CHUNK_BYTES * 4);
        assert_eq!(log.pending.dropped_events, 1, "the middle one went");
    }
}
