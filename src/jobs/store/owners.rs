//! Who owns a job: the jobs of a server that is gone, and cancel requests from a shell or
//! another server to the owner.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::id::JobId;
use super::queries::{UNFINISHED, now_ms, owner, parsed};
use super::record::{CancelRequest, JobStatus, Owner};
use super::{Store, StoreError};

impl Store {
    /// Every queued or running job whose owner is not alive becomes interrupted; returns their ids.
    pub fn interrupt_orphans(&self) -> Result<Vec<JobId>, StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.fail())?;
        let unfinished: Vec<(String, Owner)> = tx
            .prepare(&format!(
                "SELECT id, owner_pid, owner_start FROM jobs WHERE status IN {UNFINISHED}"
            ))
            .and_then(|mut select| {
                select
                    .query_map([], |row| Ok((row.get(0)?, owner(row, 1)?)))?
                    .collect()
            })
            .map_err(self.fail())?;
        let mut alive = HashMap::new();
        let mut orphans = Vec::new();
        for (id, owner) in unfinished {
            if !*alive.entry(owner).or_insert_with(|| owner.is_alive()) {
                interrupt(&tx, &id).map_err(self.fail())?;
                orphans.push(JobId::stored(id));
            }
        }
        tx.commit().map_err(self.fail())?;
        Ok(orphans)
    }

    /// From a shell or another server: ask the owner to cancel. Already finished → that
    /// status; owner gone → the job is marked interrupted and the caller is told so.
    pub fn request_cancel(&self, id: &JobId) -> Result<CancelRequest, StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.fail())?;
        let found: Option<(JobStatus, Owner)> = tx
            .query_row(
                "SELECT status, owner_pid, owner_start FROM jobs WHERE id = ?1",
                [id.as_str()],
                |row| Ok((parsed(row, 0)?, owner(row, 1)?)),
            )
            .optional()
            .map_err(self.fail())?;
        let Some((status, owner)) = found else {
            return Err(self.unknown_job(id));
        };
        let answer = if status.is_finished() {
            CancelRequest::AlreadyFinished(status)
        } else if !owner.is_alive() {
            interrupt(&tx, id.as_str()).map_err(self.fail())?;
            CancelRequest::OwnerGone
        } else {
            tx.execute(
                "UPDATE jobs SET cancel_requested = 1 WHERE id = ?1",
                [id.as_str()],
            )
            .map_err(self.fail())?;
            CancelRequest::Requested { owner }
        };
        tx.commit().map_err(self.fail())?;
        Ok(answer)
    }

    /// Polled by a server (~every 500 ms): its unfinished jobs whose cancel was requested.
    pub fn cancel_requests(&self, owner: &Owner) -> Result<Vec<JobId>, StoreError> {
        self.conn()
            .prepare_cached(&format!(
                "SELECT id FROM jobs WHERE status IN {UNFINISHED} AND cancel_requested = 1
                    AND owner_pid = ?1 AND owner_start = ?2"
            ))
            .and_then(|mut select| {
                select
                    .query_map(params![owner.pid, owner.start_ticks], |row| {
                        row.get(0).map(JobId::stored)
                    })?
                    .collect()
            })
            .map_err(self.fail())
    }
}

pub(super) fn interrupt(tx: &rusqlite::Transaction, id: &str) -> rusqlite::Result<usize> {
    tx.execute(
        &format!(
            "UPDATE jobs SET status = 'interrupted', finished_ms = ?2
             WHERE id = ?1 AND status IN {UNFINISHED}"
        ),
        params![id, now_ms()],
    )
}
