//! A job's life in the store: insert, run, finish, read, list, prune.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use cli_agent_engine::Outcome;
use rusqlite::types::Type;
use rusqlite::{OptionalExtension, Row, TransactionBehavior, params};

use super::id::JobId;
use super::record::{JobRecord, JobStatus, ListFilter, NewJob, Owner, TranscriptInfo, TreeSummary};
use super::{Store, StoreError};

/// The prompt's first characters kept in the row.
const PREVIEW_CHARS: usize = 200;
pub(super) const UNFINISHED: &str = "('queued', 'running', 'needs_input')";

/// The columns [`record`] reads, in its order.
pub(super) const RECORD: &str =
    "id, agent, origin, status, workspace, permission, model, prompt_preview,
    created_ms, started_ms, finished_ms, owner_pid, owner_start, progress, session_id,
    answer_chars, outcome -> '$.error', outcome -> '$.usage',
    events, event_bytes, dropped_events, dropped_bytes,
    tree ->> '$.tree.isolation', tree_state, tree ->> '$.tree.worktree.branch',
    tree ->> '$.tree.worktree.path', outcome ->> '$.tree.changes.files_changed',
    outcome ->> '$.tree.changes.lines_added', outcome ->> '$.tree.changes.lines_removed',
    allowed_past,
    CASE WHEN status = 'needs_input' THEN (
        SELECT json_object('number', number, 'asked', asked, 'asked_ms', asked_ms)
        FROM questions WHERE job_id = jobs.id AND answer IS NULL ORDER BY number LIMIT 1
    ) END";

impl Store {
    pub fn insert(&self, job: &NewJob) -> Result<(), StoreError> {
        let now = now_ms();
        let started = (job.status == JobStatus::Running).then_some(now);
        let preview: String = job.prompt.chars().take(PREVIEW_CHARS).collect();
        self.conn()
            .prepare_cached(
                "INSERT INTO jobs (id, agent, origin, status, workspace, permission, model,
                    prompt_preview, created_ms, started_ms, owner_pid, owner_start, session_id,
                    allowed_past)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )
            .and_then(|mut insert| {
                insert.execute(params![
                    job.id.as_str(),
                    job.agent.name(),
                    job.origin.name(),
                    job.status.name(),
                    job.workspace.to_string_lossy(),
                    job.permission.name(),
                    job.model,
                    preview,
                    now,
                    started,
                    self.owner().pid,
                    self.owner().start_ticks,
                    job.session_id,
                    job.allowed_past,
                ])
            })
            .map_err(self.fail())?;
        Ok(())
    }

    /// A queued job starts running; a job that left the queue otherwise stays as it is.
    pub fn mark_running(&self, id: &JobId) -> Result<(), StoreError> {
        self.update(
            id,
            "UPDATE jobs SET status = 'running', started_ms = ?2 WHERE id = ?1 AND status = 'queued'",
        )
    }

    /// The bounds the person let job `id` past, once they allowed it on the dashboard.
    pub fn set_allowed_past(&self, id: &JobId, allowed_past: &str) -> Result<(), StoreError> {
        let changed = self
            .conn()
            .execute(
                "UPDATE jobs SET allowed_past = ?2 WHERE id = ?1",
                params![id.as_str(), allowed_past],
            )
            .map_err(self.fail())?;
        self.found(id, changed > 0)
    }

    /// The final state; the whole answer is kept (TEXT column), the rest of the Outcome as JSON.
    /// Events recorded after it are still appended.
    pub fn finish(
        &self,
        id: &JobId,
        status: JobStatus,
        outcome: &Outcome,
    ) -> Result<(), StoreError> {
        let rest = serde_json::to_string(&kept(outcome)).map_err(self.bad_record(id))?;
        let changed = self
            .conn()
            .prepare_cached(
                "UPDATE jobs SET status = ?2, finished_ms = ?3, answer = ?4, answer_chars = ?5,
                    outcome = ?6, session_id = coalesce(?7, session_id)
                 WHERE id = ?1",
            )
            .and_then(|mut update| {
                update.execute(params![
                    id.as_str(),
                    status.name(),
                    now_ms(),
                    outcome.answer,
                    outcome.answer.chars().count() as u64,
                    rest,
                    outcome.session_id,
                ])
            })
            .map_err(self.fail())?;
        self.found(id, changed > 0)
    }

    pub fn get(&self, id: &JobId) -> Result<Option<JobRecord>, StoreError> {
        self.conn()
            .prepare_cached(&format!("SELECT {RECORD} FROM jobs WHERE id = ?1"))
            .and_then(|mut select| select.query_row([id.as_str()], record).optional())
            .map_err(self.fail())
    }

    /// The whole Outcome, answer included; `None` for an unknown job or one not finished.
    pub fn outcome(&self, id: &JobId) -> Result<Option<Outcome>, StoreError> {
        let stored: Option<(Option<String>, Option<String>)> = self
            .conn()
            .prepare_cached("SELECT answer, outcome FROM jobs WHERE id = ?1")
            .and_then(|mut select| {
                select
                    .query_row([id.as_str()], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
            })
            .map_err(self.fail())?;
        let Some((answer, Some(rest))) = stored else {
            return Ok(None);
        };
        // The column holds no answer (or an empty one): it has a column of its own.
        let mut value: serde_json::Value =
            serde_json::from_str(&rest).map_err(self.bad_record(id))?;
        if let Some(fields) = value.as_object_mut() {
            fields.insert("answer".into(), answer.unwrap_or_default().into());
        }
        serde_json::from_value(value)
            .map(Some)
            .map_err(self.bad_record(id))
    }

    pub fn list(&self, filter: &ListFilter) -> Result<Vec<JobRecord>, StoreError> {
        let workspace = filter
            .workspace
            .as_ref()
            .map(|dir| dir.to_string_lossy().into_owned());
        self.conn()
            .prepare_cached(&format!(
                "SELECT {RECORD} FROM jobs
                 WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR agent = ?2)
                    AND (?3 IS NULL OR workspace = ?3)
                 ORDER BY created_ms DESC, rowid DESC LIMIT ?4 OFFSET ?5"
            ))
            .and_then(|mut select| {
                select
                    .query_map(
                        params![
                            filter.status.map(JobStatus::name),
                            filter.agent.as_deref(),
                            workspace,
                            filter.limit as u64,
                            filter.offset as u64,
                        ],
                        record,
                    )?
                    .collect()
            })
            .map_err(self.fail())
    }

    /// Finished jobs older than `age` (their events too); returns how many.
    pub fn prune(&self, age: Duration) -> Result<usize, StoreError> {
        let cutoff = now_ms().saturating_sub(age.as_millis() as u64);
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.fail())?;
        let old =
            format!("SELECT id FROM jobs WHERE finished_ms < ?1 AND status NOT IN {UNFINISHED}");
        let trees = old_trees(&tx, &old, cutoff).map_err(self.fail())?;
        for table in ["chunks", "questions"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE job_id IN ({old})"),
                [cutoff],
            )
            .map_err(self.fail())?;
        }
        let pruned = tx
            .execute(&format!("DELETE FROM jobs WHERE id IN ({old})"), [cutoff])
            .map_err(self.fail())?;
        tx.commit().map_err(self.fail())?;
        drop(conn);
        super::trees::forget_trees(trees);
        Ok(pruned)
    }

    /// Runs an update of job `?1` (with the time as `?2`); an unknown job is an error.
    fn update(&self, id: &JobId, sql: &str) -> Result<(), StoreError> {
        let conn = self.conn();
        conn.execute(sql, params![id.as_str(), now_ms()])
            .map_err(self.fail())?;
        let exists = conn
            .query_row(
                "SELECT 1 FROM jobs WHERE id = ?1",
                [id.as_str()],
                |_| Ok(()),
            )
            .optional()
            .map_err(self.fail())?;
        self.found(id, exists.is_some())
    }

    fn found(&self, id: &JobId, found: bool) -> Result<(), StoreError> {
        if found {
            Ok(())
        } else {
            Err(self.unknown_job(id))
        }
    }

    /// The error for a job this store does not hold.
    pub fn unknown_job(&self, id: &JobId) -> StoreError {
        StoreError::UnknownJob {
            id: id.clone(),
            path: self.path().to_owned(),
        }
    }
}

/// A row of [`RECORD`] columns.
pub(super) fn record(row: &Row) -> rusqlite::Result<JobRecord> {
    Ok(JobRecord {
        id: JobId::stored(row.get(0)?),
        agent: row.get(1)?,
        origin: parsed(row, 2)?,
        status: parsed(row, 3)?,
        workspace: row.get::<_, String>(4)?.into(),
        permission: parsed(row, 5)?,
        model: row.get(6)?,
        prompt_preview: row.get(7)?,
        created_ms: row.get(8)?,
        started_ms: row.get(9)?,
        finished_ms: row.get(10)?,
        owner: owner(row, 11)?,
        progress: row.get(13)?,
        session_id: row.get(14)?,
        answer_chars: row.get(15)?,
        error: json(row, 16)?,
        usage: json(row, 17)?,
        transcript: TranscriptInfo {
            events: row.get(18)?,
            bytes: row.get(19)?,
            dropped_events: row.get(20)?,
            dropped_bytes: row.get(21)?,
        },
        tree: tree_summary(row, 22)?,
        allowed_past: row.get(29)?,
        waiting_for: json(row, 30)?,
    })
}

/// The [`TreeSummary`] in the columns from `first` on; `None` for a job without a tree.
fn tree_summary(row: &Row, first: usize) -> rusqlite::Result<Option<TreeSummary>> {
    let Some(isolation) = row.get::<_, Option<String>>(first)? else {
        return Ok(None);
    };
    let isolation = isolation.parse().map_err(|error: String| {
        rusqlite::Error::FromSqlConversionFailure(first, Type::Text, error.into())
    })?;
    Ok(Some(TreeSummary {
        isolation,
        state: parsed(row, first + 1)?,
        branch: row.get(first + 2)?,
        worktree: row.get::<_, Option<String>>(first + 3)?.map(PathBuf::from),
        files_changed: row.get(first + 4)?,
        lines_added: row.get(first + 5)?,
        lines_removed: row.get(first + 6)?,
    }))
}

pub(super) fn owner(row: &Row, first: usize) -> rusqlite::Result<Owner> {
    Ok(Owner {
        pid: row.get(first)?,
        start_ticks: row.get(first + 1)?,
    })
}

/// A TEXT column holding a name that `T` parses.
pub(super) fn parsed<T: FromStr<Err = String>>(row: &Row, index: usize) -> rusqlite::Result<T> {
    row.get::<_, String>(index)?
        .parse()
        .map_err(|error: String| {
            rusqlite::Error::FromSqlConversionFailure(index, Type::Text, error.into())
        })
}

/// A column holding JSON (or NULL) for `T`.
fn json<T: serde::de::DeserializeOwned>(row: &Row, index: usize) -> rusqlite::Result<Option<T>> {
    row.get::<_, Option<String>>(index)?
        .map(|text| serde_json::from_str::<Option<T>>(&text))
        .transpose()
        .map(Option::flatten)
        .map_err(|error| rusqlite::Error::FromSqlConversionFailure(index, Type::Text, error.into()))
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64)
}

/// The outcome as its row keeps it: the answer has a column of its own (paged by character).
fn kept(outcome: &Outcome) -> Outcome {
    Outcome {
        answer: String::new(),
        agent: outcome.agent.clone(),
        session_id: outcome.session_id.clone(),
        reasoning: outcome.reasoning.clone(),
        tools: outcome.tools.clone(),
        stderr_tail: outcome.stderr_tail.clone(),
        warnings: outcome.warnings.clone(),
        error: outcome.error.clone(),
        tree: outcome.tree.clone(),
        check: outcome.check.clone(),
        output: outcome.output.clone(),
        ..*outcome
    }
}

/// The trees of the jobs `old` selects, to clean their repositories once they are pruned.
fn old_trees(
    tx: &rusqlite::Transaction<'_>,
    old: &str,
    cutoff: u64,
) -> rusqlite::Result<Vec<(String, String)>> {
    let mut select = tx.prepare(&format!(
        "SELECT id, tree FROM jobs WHERE id IN ({old}) AND tree IS NOT NULL"
    ))?;
    let rows = select.query_map([cutoff], |row| Ok((row.get(0)?, row.get(1)?)))?;
    rows.collect()
}
