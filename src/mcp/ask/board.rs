//! Questions for clients on protocol 2026-07-28, which take no requests from a server: each
//! waits here, under its job, until a request of the client carries it out as an input request
//! (the `InputRequiredResult` of the job's own call or of a `job_wait` on it, or the job's task
//! while it is `input_required`) and the client's next request brings the answer back.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, InputRequest, InputRequests, InputResponses,
};
use serde_json::Value;
use tokio::sync::{Notify, oneshot};

use crate::jobs::store::JobId;

/// The questions waiting for a client to carry them to the person.
#[derive(Default)]
pub struct Board {
    waiting: Mutex<Vec<Waiting>>,
    /// Woken whenever a question is posted.
    posted: Notify,
    /// Numbers the questions: a key is never used twice while the server runs.
    next: AtomicU64,
}

struct Waiting {
    key: String,
    job: JobId,
    form: ElicitRequestParams,
    answer: oneshot::Sender<Value>,
}

/// A question on the board, until it is answered or this is dropped (its asker gave up).
pub struct Posted {
    board: Arc<Board>,
    key: String,
    answer: oneshot::Receiver<Value>,
}

impl Posted {
    /// The client's answer, as it came back (an elicitation's result, unchecked).
    pub async fn answer(&mut self) -> Value {
        // The sender is only dropped with its answer sent: while this waits, it is on the board.
        (&mut self.answer).await.unwrap_or(Value::Null)
    }
}

impl Drop for Posted {
    fn drop(&mut self) {
        self.board.lock().retain(|waiting| waiting.key != self.key);
    }
}

impl Board {
    /// Post `form`, a question about `job`, for the next request that can carry it.
    pub fn post(self: &Arc<Self>, job: &JobId, form: ElicitRequestParams) -> Posted {
        let key = format!("question-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (sender, answer) = oneshot::channel();
        self.lock().push(Waiting {
            key: key.clone(),
            job: job.clone(),
            form,
            answer: sender,
        });
        self.posted.notify_waiters();
        Posted {
            board: self.clone(),
            key,
            answer,
        }
    }

    /// The questions about `jobs` waiting now, as input requests under their keys.
    pub fn questions(&self, jobs: &[JobId]) -> InputRequests {
        self.lock()
            .iter()
            .filter(|waiting| jobs.contains(&waiting.job))
            .map(|waiting| {
                let request = ElicitRequest::new(waiting.form.clone());
                (waiting.key.clone(), InputRequest::Elicitation(request))
            })
            .collect()
    }

    /// Resolves with the questions about `jobs` as soon as there is one.
    pub async fn until_asking(&self, jobs: &[JobId]) -> InputRequests {
        loop {
            let posted = self.posted.notified();
            tokio::pin!(posted);
            posted.as_mut().enable();
            let questions = self.questions(jobs);
            if !questions.is_empty() {
                return questions;
            }
            posted.await;
        }
    }

    /// Hand each of `responses` to the question about one of `jobs` waiting under its key;
    /// other keys (a question no longer asked, or never) are ignored. Returns how many were
    /// handed over.
    pub fn answer(&self, jobs: &[JobId], responses: &InputResponses) -> usize {
        let mut waiting = self.lock();
        let (answered, kept): (Vec<_>, Vec<_>) = waiting.drain(..).partition(|question| {
            jobs.contains(&question.job) && responses.contains_key(&question.key)
        });
        *waiting = kept;
        drop(waiting);
        let count = answered.len();
        for question in answered {
            if let Some(response) = responses.get(&question.key) {
                // Its asker may have given up meanwhile: then nobody needs the answer.
                let _ = question.answer.send(response.clone());
            }
        }
        count
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Waiting>> {
        self.waiting
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn form(text: &str) -> ElicitRequestParams {
        super::super::form::form(text.to_owned()).expect("a form")
    }

    #[tokio::test]
    async fn a_question_waits_for_its_jobs_callers_and_goes_back_to_its_asker() {
        let board = Arc::new(Board::default());
        let (job, other) = (JobId::random(), JobId::random());
        let waiting_for = {
            let board = board.clone();
            let job = job.clone();
            tokio::spawn(async move { board.until_asking(&[job]).await })
        };
        let mut posted = board.post(&job, form("May it?"));
        let questions = tokio::time::timeout(Duration::from_secs(30), waiting_for)
            .await
            .expect("the waiter heard of the question")
            .expect("joined");
        assert_eq!(questions.len(), 1);
        assert!(board.questions(std::slice::from_ref(&other)).is_empty());
        let key = questions.keys().next().expect("a key").clone();
        let answer = json!({"action": "accept", "content": {"allow": true}});
        let responses = InputResponses::from([(key.clone(), answer.clone())]);
        assert_eq!(board.answer(std::slice::from_ref(&other), &responses), 0);
        assert_eq!(board.answer(std::slice::from_ref(&job), &responses), 1);
        assert_eq!(posted.answer().await, answer);
        assert!(board.questions(&[job]).is_empty(), "answered once");
    }

    #[test]
    fn a_question_given_up_leaves_the_board_and_keys_are_never_reused() {
        let board = Arc::new(Board::default());
        let job = JobId::random();
        let first = board.post(&job, form("one"));
        let first_key = first.key.clone();
        drop(first);
        assert!(board.questions(std::slice::from_ref(&job)).is_empty());
        let second = board.post(&job, form("two"));
        assert_ne!(second.key, first_key);
    }
}
