//! A job's events in the database: chunks of JSON lines, one row each, under the transcript
//! size cap, which keeps the head and the newest tail and counts what it dropped between.

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{OptionalExtension, Transaction, params};

use super::id::JobId;
use super::recorder::JobBuffer;

/// Writes what a job's recorders gathered: its progress and session, what the recorder
/// dropped from the tail, then its chunks, each freed once SQLite has it (a burst's batch is a
/// megabyte or more, and the recorder fills the next one meanwhile).
pub(super) fn write_batch(
    tx: &Transaction,
    id: &JobId,
    batch: &mut JobBuffer,
    max: u64,
) -> rusqlite::Result<()> {
    if batch.progress.is_some() || batch.session_id.is_some() {
        tx.prepare_cached(
            "UPDATE jobs SET progress = coalesce(?2, progress), session_id = coalesce(?3, session_id)
             WHERE id = ?1",
        )?
        .execute(params![id.as_str(), batch.progress, batch.session_id])?;
    }
    if batch.dropped_events > 0 {
        tx.prepare_cached(
            "UPDATE jobs SET dropped_events = dropped_events + ?2, dropped_bytes = dropped_bytes + ?3
             WHERE id = ?1",
        )?
        .execute(params![id.as_str(), batch.dropped_events, batch.dropped_bytes])?;
    }
    for chunk in batch.chunks.drain(..) {
        append_chunk(tx, id, &chunk.lines, chunk.events, max)?;
    }
    Ok(())
}

/// A job's event tallies as its row holds them: what its chunks keep, and what was dropped.
struct Tally {
    events: u64,
    bytes: u64,
    dropped_events: u64,
    dropped_bytes: u64,
}

/// Adds whole JSON lines as one chunk, then drops the oldest chunks after the head while the
/// job holds more than `max` bytes. The newest chunk always stays.
fn append_chunk(
    tx: &Transaction,
    id: &JobId,
    lines: &[u8],
    count: u64,
    max: u64,
) -> rusqlite::Result<()> {
    let Some(mut tally) = read_tally(tx, id)? else {
        // Never inserted, or pruned since: nothing to attach the events to.
        tracing::debug!(job = %id, "events of an unknown job dropped");
        return Ok(());
    };
    let first = tally.events + tally.dropped_events;
    let size = lines.len() as u64;
    let head = tally.bytes + tally.dropped_bytes < max / 2;
    // serde_json writes UTF-8: bound as text as it is, without checking it again.
    let text = ToSqlOutput::Borrowed(ValueRef::Text(lines));
    tx.prepare_cached(
        "INSERT INTO chunks (job_id, first_event, events, bytes, head, lines)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![id.as_str(), first, count, size, head, text])?;
    tally.events += count;
    tally.bytes += size;
    drop_oldest_over(tx, id, first, max, &mut tally)?;
    tx.prepare_cached(
        "UPDATE jobs SET events = ?2, event_bytes = ?3, dropped_events = ?4, dropped_bytes = ?5
         WHERE id = ?1",
    )?
    .execute(params![
        id.as_str(),
        tally.events,
        tally.bytes,
        tally.dropped_events,
        tally.dropped_bytes
    ])?;
    Ok(())
}

/// The job's tallies; `None` for a job the database does not hold.
fn read_tally(tx: &Transaction, id: &JobId) -> rusqlite::Result<Option<Tally>> {
    tx.prepare_cached(
        "SELECT events, event_bytes, dropped_events, dropped_bytes FROM jobs WHERE id = ?1",
    )?
    .query_row([id.as_str()], |row| {
        Ok(Tally {
            events: row.get(0)?,
            bytes: row.get(1)?,
            dropped_events: row.get(2)?,
            dropped_bytes: row.get(3)?,
        })
    })
    .optional()
}

/// Deletes the oldest chunks outside the head, never the one from `newest` on, while the job
/// keeps more than `max` bytes, moving them in `tally` from kept to dropped.
fn drop_oldest_over(
    tx: &Transaction,
    id: &JobId,
    newest: u64,
    max: u64,
    tally: &mut Tally,
) -> rusqlite::Result<()> {
    while tally.bytes > max {
        let oldest: Option<(u64, u64, u64)> = tx
            .prepare_cached(
                "SELECT first_event, events, bytes FROM chunks
                 WHERE job_id = ?1 AND head = 0 AND first_event < ?2
                 ORDER BY first_event LIMIT 1",
            )?
            .query_row(params![id.as_str(), newest], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .optional()?;
        let Some((oldest_first, oldest_events, oldest_bytes)) = oldest else {
            break;
        };
        tx.prepare_cached("DELETE FROM chunks WHERE job_id = ?1 AND first_event = ?2")?
            .execute(params![id.as_str(), oldest_first])?;
        tally.events -= oldest_events;
        tally.bytes -= oldest_bytes;
        tally.dropped_events += oldest_events;
        tally.dropped_bytes += oldest_bytes;
    }
    Ok(())
}
