//! The tables, and the migration from nothing. `PRAGMA user_version` holds the schema version,
//! so a later version adds a step to `MIGRATIONS` and older files move forward on open.

use rusqlite::{Connection, TransactionBehavior};

/// Each step takes the schema from version `index` to `index + 1`.
const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5];

pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// One row per job. `answer` is the whole answer and `outcome` the rest of the Outcome as
/// JSON, both set when it finishes. `events`/`event_bytes` count what `chunks` holds,
/// `dropped_*` what the size cap took out of the middle.
pub(super) const V1: &str = "
CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    origin TEXT NOT NULL,
    status TEXT NOT NULL,
    workspace TEXT NOT NULL,
    permission TEXT NOT NULL,
    model TEXT,
    prompt_preview TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    started_ms INTEGER,
    finished_ms INTEGER,
    owner_pid INTEGER NOT NULL,
    owner_start INTEGER NOT NULL,
    progress TEXT,
    session_id TEXT,
    answer TEXT,
    answer_chars INTEGER NOT NULL DEFAULT 0,
    outcome TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    events INTEGER NOT NULL DEFAULT 0,
    event_bytes INTEGER NOT NULL DEFAULT 0,
    dropped_events INTEGER NOT NULL DEFAULT 0,
    dropped_bytes INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX jobs_by_age ON jobs (created_ms);
CREATE INDEX jobs_unfinished ON jobs (status) WHERE status IN ('queued', 'running');

-- A job's events, one row per batch the recorder wrote: JSON lines, `events` of them, from
-- index `first_event` of the whole stream. `head` marks the batches the size cap never drops.
CREATE TABLE chunks (
    job_id TEXT NOT NULL,
    first_event INTEGER NOT NULL,
    events INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    head INTEGER NOT NULL,
    lines TEXT NOT NULL,
    PRIMARY KEY (job_id, first_event)
) STRICT;
";

/// `changed` orders the rows' changes: every insert and update of a job gives its row the next
/// number, so a reader asks for what changed since the last number it saw (the dashboard's
/// feed). Writers are serialized, so a commit's numbers are above all earlier commits' numbers.
/// The update trigger skips its own update (`changed` moved), with or without recursive triggers.
const V2: &str = "
ALTER TABLE jobs ADD COLUMN changed INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET changed = rowid;
CREATE INDEX jobs_by_change ON jobs (changed);
CREATE TRIGGER jobs_inserted AFTER INSERT ON jobs BEGIN
    UPDATE jobs SET changed = (SELECT max(changed) FROM jobs) + 1 WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER jobs_updated AFTER UPDATE ON jobs WHEN NEW.changed = OLD.changed BEGIN
    UPDATE jobs SET changed = (SELECT max(changed) FROM jobs) + 1 WHERE rowid = NEW.rowid;
END;
";

/// `tree` is where a job worked (see `trees`), as JSON, set when its run is placed;
/// `tree_state` what became of it since.
const V3: &str = "
ALTER TABLE jobs ADD COLUMN tree TEXT;
ALTER TABLE jobs ADD COLUMN tree_state TEXT;
";

/// `allowed_past` is what the person let an MCP call past (the server's bounds, in the words
/// they were asked in); NULL for a job that stayed within them.
const V4: &str = "
ALTER TABLE jobs ADD COLUMN allowed_past TEXT;
";

/// `questions` holds the questions a job parked for the person to answer on the dashboard
/// (`--park-questions`): `answer` is NULL while it waits, then `allowed`, `declined`, or
/// `withdrawn` when the run stopped waiting first. A job with one waiting is `needs_input`, an
/// unfinished state the partial index now covers too.
const V5: &str = "
CREATE TABLE questions (
    job_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    asked TEXT NOT NULL,
    asked_ms INTEGER NOT NULL,
    answer TEXT,
    answered_ms INTEGER,
    PRIMARY KEY (job_id, number)
) STRICT;
DROP INDEX jobs_unfinished;
CREATE INDEX jobs_unfinished ON jobs (status) WHERE status IN ('queued', 'running', 'needs_input');
";

/// Brings the database to [`VERSION`]; refuses one newer than this code.
pub fn migrate(conn: &mut Connection) -> Result<(), MigrateError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > VERSION {
        return Err(MigrateError::Newer(found));
    }
    for step in &MIGRATIONS[found.max(0) as usize..] {
        tx.execute_batch(step)?;
    }
    tx.pragma_update(None, "user_version", VERSION)?;
    tx.commit()?;
    Ok(())
}

pub enum MigrateError {
    Newer(i64),
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for MigrateError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Sqlite(error)
    }
}
