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
#[path = "feed_tests.rs"]
mod tests;
