//! Questions a job parks for the person (`--park-questions`): its server records one and waits,
//! the job `needs_input`; the dashboard (this server's or another process's) records the
//! person's answer; the server takes it, and the job runs on. The store is the only channel
//! between them, as for cancels from outside.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::id::JobId;
use super::queries::{now_ms, owner, parsed};
use super::record::{JobStatus, Owner};
use super::{Store, StoreError};

const ALLOWED: &str = "allowed";
const DECLINED: &str = "declined";
/// The run stopped waiting before anybody answered (it ended, or the CLI gave up asking).
const WITHDRAWN: &str = "withdrawn";

/// What came of the person's answer to a parked question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParkedAnswer {
    /// Recorded: the job's server takes it within a moment.
    Taken,
    /// It had been answered already (or withdrawn): the answer it has.
    AlreadySettled(String),
    /// The job has no such question.
    NoSuchQuestion,
    /// Its server is gone, so nothing waits for the answer: the job is now interrupted.
    OwnerGone { pid: u32 },
}

impl ParkedAnswer {
    /// The result's name in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Taken => "answered",
            Self::AlreadySettled(_) => "already_settled",
            Self::NoSuchQuestion => "no_such_question",
            Self::OwnerGone { .. } => "owner_gone",
        }
    }

    /// What happened, for a person.
    pub fn message(&self, id: &JobId, number: u32, allow: bool) -> String {
        let verb = if allow { "allowed" } else { "declined" };
        match self {
            Self::Taken => format!("question {number} of job {id} {verb}: the job goes on"),
            Self::AlreadySettled(answer) => {
                format!("question {number} of job {id} was settled already: {answer}")
            }
            Self::NoSuchQuestion => format!("job {id} asked no question {number}"),
            Self::OwnerGone { pid } => format!(
                "the server that ran job {id} (pid {pid}) is gone, so nothing waits for this \
                 answer; the job is now recorded interrupted"
            ),
        }
    }
}

impl Store {
    /// Job `id` (queued or running) waits on the person for `asked`: recorded, and the job
    /// `needs_input`. Returns the question's number.
    pub fn park_question(&self, id: &JobId, asked: &str) -> Result<u32, StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.fail())?;
        let changed = tx
            .execute(
                "UPDATE jobs SET status = 'needs_input' WHERE id = ?1
                    AND status IN ('queued', 'running', 'needs_input')",
                [id.as_str()],
            )
            .map_err(self.fail())?;
        if changed == 0 {
            return Err(self.unknown_job(id));
        }
        let number: u32 = tx
            .query_row(
                "SELECT coalesce(max(number), 0) + 1 FROM questions WHERE job_id = ?1",
                [id.as_str()],
                |row| row.get(0),
            )
            .map_err(self.fail())?;
        tx.execute(
            "INSERT INTO questions (job_id, number, asked, asked_ms) VALUES (?1, ?2, ?3, ?4)",
            params![id.as_str(), number, asked, now_ms()],
        )
        .map_err(self.fail())?;
        tx.commit().map_err(self.fail())?;
        Ok(number)
    }

    /// The person's answer to question `number` of job `id`, from the dashboard.
    pub fn answer_parked(
        &self,
        id: &JobId,
        number: u32,
        allow: bool,
    ) -> Result<ParkedAnswer, StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.fail())?;
        let Some((status, owner, answer)) = question(&tx, id, number).map_err(self.fail())? else {
            return Err(self.unknown_job(id));
        };
        let result = match answer {
            None => ParkedAnswer::NoSuchQuestion,
            Some(Some(answer)) => ParkedAnswer::AlreadySettled(answer),
            Some(None) if status.is_finished() => {
                ParkedAnswer::AlreadySettled(format!("the job had ended ({status})"))
            }
            Some(None) if !owner.is_alive() => {
                super::owners::interrupt(&tx, id.as_str()).map_err(self.fail())?;
                ParkedAnswer::OwnerGone { pid: owner.pid }
            }
            Some(None) => {
                let answer = if allow { ALLOWED } else { DECLINED };
                tx.execute(
                    "UPDATE questions SET answer = ?3, answered_ms = ?4
                     WHERE job_id = ?1 AND number = ?2",
                    params![id.as_str(), number, answer, now_ms()],
                )
                .map_err(self.fail())?;
                ParkedAnswer::Taken
            }
        };
        tx.commit().map_err(self.fail())?;
        Ok(result)
    }

    /// Polled by the job's server: `Some(allowed)` once the person answered question `number`.
    pub fn parked_answer(&self, id: &JobId, number: u32) -> Result<Option<bool>, StoreError> {
        let answer: Option<String> = self
            .conn()
            .prepare_cached("SELECT answer FROM questions WHERE job_id = ?1 AND number = ?2")
            .and_then(|mut select| {
                select
                    .query_row(params![id.as_str(), number], |row| row.get(0))
                    .optional()
            })
            .map_err(self.fail())?
            .flatten();
        Ok(answer.map(|answer| answer == ALLOWED))
    }

    /// The job's server is done with question `number` (it took the answer, or stopped
    /// waiting: then it is withdrawn); once no other question waits, the job is `running`
    /// again, or `queued` if it had not started.
    pub fn settle_parked(&self, id: &JobId, number: u32) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.fail())?;
        tx.execute(
            "UPDATE questions SET answer = ?3, answered_ms = ?4
             WHERE job_id = ?1 AND number = ?2 AND answer IS NULL",
            params![id.as_str(), number, WITHDRAWN, now_ms()],
        )
        .map_err(self.fail())?;
        tx.execute(
            "UPDATE jobs
                SET status = CASE WHEN started_ms IS NULL THEN 'queued' ELSE 'running' END
             WHERE id = ?1 AND status = 'needs_input'
                AND NOT EXISTS (SELECT 1 FROM questions WHERE job_id = ?1 AND answer IS NULL)",
            [id.as_str()],
        )
        .map_err(self.fail())?;
        tx.commit().map_err(self.fail())
    }
}

/// Job `id`'s status and owner, and question `number`'s answer: `None` for no such question,
/// `Some(None)` while it waits. `None` for an unknown job.
type Found = (JobStatus, Owner, Option<Option<String>>);

fn question(
    tx: &rusqlite::Transaction,
    id: &JobId,
    number: u32,
) -> rusqlite::Result<Option<Found>> {
    let job: Option<(JobStatus, Owner)> = tx
        .query_row(
            "SELECT status, owner_pid, owner_start FROM jobs WHERE id = ?1",
            [id.as_str()],
            |row| Ok((parsed(row, 0)?, owner(row, 1)?)),
        )
        .optional()?;
    let Some((status, owner)) = job else {
        return Ok(None);
    };
    let answer = tx
        .query_row(
            "SELECT answer FROM questions WHERE job_id = ?1 AND number = ?2",
            params![id.as_str(), number],
            |row| row.get(0),
        )
        .optional()?;
    Ok(Some((status, owner, answer)))
}

#[cfg(test)]
mod tests {
    use cli_agent_engine::clis::CLAUDE;

    use super::*;
    use crate::jobs::store::tests::{dead_owner, insert, open, outcome, set_owner, status};

    #[test]
    fn a_parked_question_makes_the_job_need_input_until_its_server_takes_the_answer() {
        let (dir, store) = open("store-parked");
        let id = insert(&store, CLAUDE, dir.path(), JobStatus::Running);
        let number = store.park_question(&id, "may it run `make`?").unwrap();
        let job = store.get(&id).unwrap().unwrap();
        assert_eq!(job.status, JobStatus::NeedsInput);
        let waiting = job.waiting_for.expect("the question it waits on");
        assert_eq!(
            (waiting.number, waiting.asked.as_str()),
            (1, "may it run `make`?")
        );
        assert_eq!(store.parked_answer(&id, number).unwrap(), None);

        assert_eq!(
            store.answer_parked(&id, number, true).unwrap(),
            ParkedAnswer::Taken
        );
        assert_eq!(store.parked_answer(&id, number).unwrap(), Some(true));
        let again = store.answer_parked(&id, number, false).unwrap();
        assert_eq!(again, ParkedAnswer::AlreadySettled(ALLOWED.into()));
        // The job stays waiting until its server has the answer.
        assert_eq!(status(&store, &id), JobStatus::NeedsInput);
        store.settle_parked(&id, number).unwrap();
        let job = store.get(&id).unwrap().unwrap();
        assert_eq!((job.status, job.waiting_for), (JobStatus::Running, None));
        assert_eq!(store.parked_answer(&id, number).unwrap(), Some(true));
    }

    #[test]
    fn a_question_withdrawn_or_of_an_ended_job_takes_no_answer() {
        let (dir, store) = open("store-parked-settled");
        let id = insert(&store, CLAUDE, dir.path(), JobStatus::Running);
        let first = store.park_question(&id, "first").unwrap();
        let second = store.park_question(&id, "second").unwrap();
        assert_eq!(second, first + 1);
        store.settle_parked(&id, first).unwrap();
        assert_eq!(store.parked_answer(&id, first).unwrap(), Some(false));
        let withdrawn = store.answer_parked(&id, first, true).unwrap();
        assert_eq!(withdrawn, ParkedAnswer::AlreadySettled(WITHDRAWN.into()));
        // The other still waits.
        let job = store.get(&id).unwrap().unwrap();
        assert_eq!(job.status, JobStatus::NeedsInput);
        assert_eq!(job.waiting_for.map(|q| q.asked), Some("second".to_owned()));
        assert_eq!(
            store.answer_parked(&id, 7, true).unwrap(),
            ParkedAnswer::NoSuchQuestion
        );

        store
            .finish(&id, JobStatus::Cancelled, &outcome(""))
            .unwrap();
        assert!(matches!(
            store.answer_parked(&id, second, true).unwrap(),
            ParkedAnswer::AlreadySettled(why) if why.contains("cancelled")
        ));
        assert!(store.get(&id).unwrap().unwrap().waiting_for.is_none());
        assert!(store.park_question(&id, "too late").is_err());
    }

    #[test]
    fn a_job_that_had_not_started_is_queued_again_once_its_question_is_settled() {
        let (dir, store) = open("store-parked-queued");
        let id = insert(&store, CLAUDE, dir.path(), JobStatus::Queued);
        let number = store
            .park_question(&id, "may it run past the bounds?")
            .unwrap();
        assert_eq!(status(&store, &id), JobStatus::NeedsInput);
        store.answer_parked(&id, number, true).unwrap();
        store.settle_parked(&id, number).unwrap();
        assert_eq!(status(&store, &id), JobStatus::Queued);
        store.mark_running(&id).unwrap();
        let job = store.get(&id).unwrap().unwrap();
        assert!(job.started_ms.is_some(), "{job:?}");
    }

    #[test]
    fn an_answer_for_a_job_whose_server_is_gone_interrupts_it() {
        let (dir, store) = open("store-parked-orphan");
        let id = insert(&store, CLAUDE, dir.path(), JobStatus::Running);
        let number = store.park_question(&id, "may it?").unwrap();
        let gone = dead_owner();
        set_owner(&store, &id, gone);
        assert_eq!(
            store.answer_parked(&id, number, true).unwrap(),
            ParkedAnswer::OwnerGone { pid: gone.pid }
        );
        assert_eq!(status(&store, &id), JobStatus::Interrupted);
        assert!(store.interrupt_orphans().unwrap().is_empty());
    }

    #[test]
    fn a_waiting_job_is_unfinished_to_the_orphan_sweep_and_the_cancel_requests() {
        let (dir, store) = open("store-parked-unfinished");
        let id = insert(&store, CLAUDE, dir.path(), JobStatus::Running);
        store.park_question(&id, "may it?").unwrap();
        store.request_cancel(&id).unwrap();
        assert_eq!(
            store.cancel_requests(&Owner::this_process()).unwrap(),
            std::slice::from_ref(&id)
        );
        set_owner(&store, &id, dead_owner());
        assert_eq!(
            store.interrupt_orphans().unwrap(),
            std::slice::from_ref(&id)
        );
        assert_eq!(status(&store, &id), JobStatus::Interrupted);
    }
}
