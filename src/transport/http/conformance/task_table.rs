//! The task fixtures' tasks (SEP-2663): a small table in memory, apart from the job store.
//! The server's own tasks are its jobs (`crate::mcp`, task id = job id `job_…`); a fixture's
//! id is `fixture-task-N`, so the handler sends `tasks/get`, `tasks/update` and `tasks/cancel`
//! here by the id alone and everything else to the jobs.
//!
//! A task runs its work on the runtime; the work may park it `input_required` with questions
//! (`inputRequests`) until `tasks/update` has answered every one, partly answered ones staying
//! pending. `tasks/cancel` settles it `cancelled` at once and drops its work; cancelling an
//! ended task changes nothing. An ended task is kept for [`TTL`] after its end.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, DetailedTask, InputRequests, InputResponses, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use serde::Serialize;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const PREFIX: &str = "fixture-task-";
/// How long an ended task stays readable (the `ttlMs` the tasks carry).
const TTL: Duration = Duration::from_secs(600);
/// The suite polls every 200 ms whatever it is told; so may any client.
const POLL_INTERVAL_MS: u64 = 200;

#[derive(Default)]
pub struct TaskTable {
    tasks: Mutex<HashMap<String, Arc<Entry>>>,
    last: AtomicU64,
}

struct Entry {
    id: String,
    created_at: SystemTime,
    state: Mutex<State>,
    /// Wakes the work when its questions are all answered.
    answered: Notify,
    /// Fired by `tasks/cancel`: the work is dropped.
    cancel: CancellationToken,
}

struct State {
    phase: Phase,
    updated_at: SystemTime,
    /// When it ended, for the table to forget it a TTL later.
    ended_at: Option<Instant>,
}

enum Phase {
    Working,
    /// Parked on questions: those still `pending`, and the answers `given` so far.
    InputRequired {
        pending: InputRequests,
        given: InputResponses,
    },
    /// Every question answered; the answers wait for the work to take them.
    Answered(InputResponses),
    /// Completed, failed or cancelled.
    Ended(TaskPayload),
}

/// What a task's work holds to ask its client through the task.
pub struct TaskInput(Arc<Entry>);

impl TaskInput {
    /// Park the task `input_required` with `questions` until `tasks/update` has answered them
    /// all; their answers, by key.
    pub async fn ask(&self, questions: InputRequests) -> InputResponses {
        self.0.set(Phase::InputRequired {
            pending: questions,
            given: InputResponses::new(),
        });
        loop {
            if let Some(answers) = self.0.take_answers() {
                return answers;
            }
            // A wake-up sent before this wait is kept (Notify's permit): none is lost.
            self.0.answered.notified().await;
        }
    }
}

impl TaskTable {
    /// Whether `task_id` is a fixture's (else it may be a job's).
    pub fn owns(task_id: &str) -> bool {
        task_id.starts_with(PREFIX)
    }

    /// A new task running `work`, already readable by `tasks/get` when this returns.
    pub fn start<F, W>(&self, work: F) -> Task
    where
        F: FnOnce(TaskInput) -> W,
        W: Future<Output = Result<CallToolResult, ErrorData>> + Send + 'static,
    {
        let number = self.last.fetch_add(1, Ordering::Relaxed) + 1;
        let now = SystemTime::now();
        let entry = Arc::new(Entry {
            id: format!("{PREFIX}{number}"),
            created_at: now,
            state: Mutex::new(State {
                phase: Phase::Working,
                updated_at: now,
                ended_at: None,
            }),
            answered: Notify::new(),
            cancel: CancellationToken::new(),
        });
        let mut tasks = lock(&self.tasks);
        tasks.retain(|_, task| !task.expired());
        tasks.insert(entry.id.clone(), entry.clone());
        drop(tasks);
        let running = work(TaskInput(entry.clone()));
        let task = entry.task(TaskStatus::Working, now);
        tokio::spawn(async move {
            tokio::select! {
                ended = running => entry.end(ended),
                () = entry.cancel.cancelled() => {}
            }
        });
        task
    }

    /// `tasks/get`.
    pub fn get(&self, task_id: &str) -> Result<DetailedTask, ErrorData> {
        Ok(self.entry(task_id)?.detailed())
    }

    /// `tasks/update`: answers to the pending questions are taken; others are ignored.
    pub fn update(&self, task_id: &str, answers: InputResponses) -> Result<(), ErrorData> {
        self.entry(task_id)?.answer(answers);
        Ok(())
    }

    /// `tasks/cancel`: a task still going is `cancelled` from now on.
    pub fn cancel(&self, task_id: &str) -> Result<(), ErrorData> {
        let entry = self.entry(task_id)?;
        let mut state = lock(&entry.state);
        if !matches!(state.phase, Phase::Ended(_)) {
            state.end(TaskPayload::Cancelled);
            entry.cancel.cancel();
        }
        Ok(())
    }

    fn entry(&self, task_id: &str) -> Result<Arc<Entry>, ErrorData> {
        lock(&self.tasks).get(task_id).cloned().ok_or_else(|| {
            ErrorData::invalid_params(
                format!("unknown task `{task_id}`: no fixture task has this id, or it expired"),
                None,
            )
        })
    }
}

impl Entry {
    fn set(&self, phase: Phase) {
        let mut state = lock(&self.state);
        if !matches!(state.phase, Phase::Ended(_)) {
            state.phase = phase;
            state.updated_at = SystemTime::now();
        }
    }

    fn end(&self, ended: Result<CallToolResult, ErrorData>) {
        let payload = match ended {
            Ok(result) => TaskPayload::Completed {
                result: as_object(&result),
            },
            Err(error) => TaskPayload::Failed {
                error: as_object(&error),
            },
        };
        let mut state = lock(&self.state);
        if !matches!(state.phase, Phase::Ended(_)) {
            state.end(payload);
        }
    }

    fn answer(&self, answers: InputResponses) {
        let mut state = lock(&self.state);
        let Phase::InputRequired { pending, given } = &mut state.phase else {
            return;
        };
        for (key, answer) in answers {
            if pending.remove(&key).is_some() {
                given.insert(key, answer);
            }
        }
        if pending.is_empty() {
            let given = std::mem::take(given);
            state.phase = Phase::Answered(given);
            self.answered.notify_one();
        }
        state.updated_at = SystemTime::now();
    }

    fn take_answers(&self) -> Option<InputResponses> {
        let mut state = lock(&self.state);
        let Phase::Answered(answers) = &mut state.phase else {
            return None;
        };
        let answers = std::mem::take(answers);
        state.phase = Phase::Working;
        Some(answers)
    }

    fn detailed(&self) -> DetailedTask {
        let state = lock(&self.state);
        let payload = match &state.phase {
            Phase::Working | Phase::Answered(_) => TaskPayload::Working,
            Phase::InputRequired { pending, .. } => TaskPayload::InputRequired {
                input_requests: pending.clone(),
            },
            Phase::Ended(payload) => payload.clone(),
        };
        DetailedTask::new(self.task(payload.status(), state.updated_at), payload)
    }

    fn task(&self, status: TaskStatus, updated_at: SystemTime) -> Task {
        Task::new(
            self.id.clone(),
            status,
            timestamp(self.created_at),
            timestamp(updated_at),
        )
        .with_ttl_ms(TTL.as_millis() as u64)
        .with_poll_interval_ms(POLL_INTERVAL_MS)
    }

    fn expired(&self) -> bool {
        lock(&self.state)
            .ended_at
            .is_some_and(|ended| ended.elapsed() > TTL)
    }
}

impl State {
    fn end(&mut self, payload: TaskPayload) {
        self.phase = Phase::Ended(payload);
        self.updated_at = SystemTime::now();
        self.ended_at = Some(Instant::now());
    }
}

/// A lock nobody panics while holding (every critical section here is a few assignments).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A result or an error as the JSON object a task carries (both are objects on the wire).
fn as_object<T: Serialize>(value: &T) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

fn timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}
