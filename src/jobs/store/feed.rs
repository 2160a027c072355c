//! What changed in the store since a reader last looked: the dashboard's live feed. Every
//! insert and update numbers its row (`changed`, see the schema's V2), so one indexed query
//! finds the rows changed since the last number seen, whichever server wrote them.

use rusqlite::params;

use super::queries::{RECORD, record};
use super::record::JobRecord;
use super::{Store, StoreError};

/// Jobs, and the number to ask [`Store::changed_since`] with next.
#[derive(Clone, Debug, PartialEq)]
pub struct FeedPage {
    pub jobs: Vec<JobRecord>,
    pub cursor: u64,
    /// How many jobs the store holds (counted for the first page only).
    pub total: Option<u64>,
}

impl Store {
    /// The newest `limit` jobs, newest first, and the cursor for the changes after them.
    pub fn feed_start(&self, limit: usize) -> Result<FeedPage, StoreError> {
        // The cursor first: a change committed between the two reads is sent again, never lost.
        let cursor = self.cursor()?;
        let conn = self.conn();
        let jobs = conn
            .prepare_cached(&format!(
                "SELECT {RECORD} FROM jobs ORDER BY created_ms DESC, rowid DESC LIMIT ?1"
            ))
            .and_then(|mut select| select.query_map([limit as u64], record)?.collect())
            .map_err(self.fail())?;
        let total = conn
            .query_row("SELECT count(*) FROM jobs", [], |row| row.get(0))
            .map_err(self.fail())?;
        Ok(FeedPage {
            jobs,
            cursor,
            total: Some(total),
        })
    }

    /// Up to `limit` jobs changed after `cursor` (inserted or updated), oldest change first.
    /// Pruned jobs are not reported.
    pub fn changed_since(&self, cursor: u64, limit: usize) -> Result<FeedPage, StoreError> {
        let conn = self.conn();
        let mut select = conn
            .prepare_cached(&format!(
                "SELECT {RECORD}, changed FROM jobs WHERE changed > ?1 ORDER BY changed LIMIT ?2"
            ))
            .map_err(self.fail())?;
        // `changed` comes after the record's columns.
        let changed = select.column_count() - 1;
        let mut rows = select
            .query(params![cursor, limit as u64])
            .map_err(self.fail())?;
        let mut page = FeedPage {
            jobs: Vec::new(),
            cursor,
            total: None,
        };
        while let Some(row) = rows.next().map_err(self.fail())? {
            page.jobs.push(record(row).map_err(self.fail())?);
            page.cursor = row.get(changed).map_err(self.fail())?;
        }
        Ok(page)
    }

    fn cursor(&self) -> Result<u64, StoreError> {
        self.conn()
            .query_row("SELECT coalesce(max(changed), 0) FROM jobs", [], |row| {
                row.get(0)
            })
            .map_err(self.fail())
    }
}

#[cfg(test)]
mod tests {
    use cli_agent_engine::{AgentEvent, AgentKind};
    use rusqlite::Connection;

    use super::super::schema::{V1, VERSION};
    use super::super::tests::{TempDir, insert, outcome};
    use super::super::{JobStatus, dir};
    use super::*;

    fn ids(page: &FeedPage) -> Vec<String> {
        page.jobs.iter().map(|job| job.id.to_string()).collect()
    }

    #[test]
    fn the_feed_reports_each_insert_progress_and_finish_once_after_the_cursor() {
        let dir = TempDir::new("feed");
        let store = Store::open(dir.path()).unwrap();
        let older = insert(&store, AgentKind::Codex, dir.path(), JobStatus::Running);
        let start = store.feed_start(10).unwrap();
        assert_eq!(ids(&start), [older.to_string()]);
        assert_eq!(start.total, Some(1));
        assert!(
            store
                .changed_since(start.cursor, 10)
                .unwrap()
                .jobs
                .is_empty()
        );

        let newer = insert(&store, AgentKind::Claude, dir.path(), JobStatus::Queued);
        let inserted = store.changed_since(start.cursor, 10).unwrap();
        assert_eq!(ids(&inserted), [newer.to_string()]);

        let recorder = store.recorder(&older);
        recorder.event(&AgentEvent::Reasoning { text: "hm".into() });
        recorder.progress("thinking");
        recorder.flush();
        store.mark_running(&newer).unwrap();
        let moved = store.changed_since(inserted.cursor, 10).unwrap();
        assert_eq!(ids(&moved), [older.to_string(), newer.to_string()]);
        assert_eq!(moved.jobs[0].progress.as_deref(), Some("thinking"));
        assert_eq!(moved.jobs[1].status, JobStatus::Running);

        store
            .finish(&older, JobStatus::Completed, &outcome("done"))
            .unwrap();
        let finished = store.changed_since(moved.cursor, 1).unwrap();
        assert_eq!(ids(&finished), [older.to_string()]);
        assert_eq!(finished.jobs[0].status, JobStatus::Completed);
        assert!(
            store
                .changed_since(finished.cursor, 10)
                .unwrap()
                .jobs
                .is_empty()
        );
    }

    #[test]
    fn a_version_1_store_migrates_and_its_jobs_are_in_the_feed() {
        let dir = TempDir::new("feed-migrate");
        let old = Connection::open(dir.path().join(dir::DB_FILE)).unwrap();
        old.execute_batch(V1).unwrap();
        old.pragma_update(None, "user_version", 1).unwrap();
        old.execute(
            "INSERT INTO jobs (id, agent, origin, status, workspace, permission, prompt_preview,
                created_ms, owner_pid, owner_start)
             VALUES ('job_aaaaaaaaaaaaaaaa', 'codex', 'call', 'running', '/w', 'read-only', 'p',
                1, 0, 0)",
            [],
        )
        .unwrap();
        drop(old);

        let store = Store::open(dir.path()).unwrap();
        let version: i64 = store
            .conn()
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, VERSION);
        let start = store.feed_start(10).unwrap();
        assert_eq!(ids(&start), ["job_aaaaaaaaaaaaaaaa"]);
        let old_job = start.jobs[0].id.clone();
        store.request_cancel(&old_job).unwrap();
        let changed = store.changed_since(start.cursor, 10).unwrap();
        assert_eq!(ids(&changed), ["job_aaaaaaaaaaaaaaaa"]);
        assert_eq!(changed.jobs[0].status, JobStatus::Interrupted);
    }
}
