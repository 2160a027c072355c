//! MCP Tasks (the 2026-07-28 extension `io.modelcontextprotocol/tasks`), backed by jobs: a
//! client that declares the extension gets a task for an agent call, and the task is the job,
//! under the job's id. The job store owns the run, not rmcp's task manager (which would abort
//! it at its TTL); `tasks/get` reads the job, `tasks/cancel` stops it. A job with a question
//! for the person (a delegate's, see `delegate_questions`) is `input_required` with the
//! question among its input requests, and `tasks/update` brings the person's answer.

use std::time::{Duration, SystemTime};

use rmcp::ErrorData;
use rmcp::model::{DetailedTask, InputResponses, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::Value;

use super::ask::Board;
use super::result::JobReport;
use crate::jobs::store::{JobId, JobRecord, JobStatus};
use crate::jobs::{Finished, Job, JobState, Jobs, JobsError, StopReason};

/// How often a client should poll `tasks/get`.
const POLL_INTERVAL_MS: u64 = 1000;

/// The task of a job just started.
pub fn created(job: &Job) -> Task {
    let at = timestamp(job.created_at);
    let status = job.progress.line();
    let mut task = Task::new(job.id.to_string(), TaskStatus::Working, at.clone(), at)
        .with_poll_interval_ms(POLL_INTERVAL_MS);
    task.status_message = status;
    task
}

/// `tasks/get`: the job as a task, with its questions while it has any, with its result
/// once it has ended.
pub async fn get(
    jobs: &Jobs,
    board: &Board,
    task_id: &str,
    budget: usize,
) -> Result<DetailedTask, ErrorData> {
    let id = task_job_id(task_id)?;
    if let Some(job) = jobs.live(&id) {
        let task = created(&job);
        let input_requests = board.questions(std::slice::from_ref(&id));
        return Ok(match job.state() {
            JobState::Finished(finished) => ended(task, &id, &finished, budget),
            _ if !input_requests.is_empty() => {
                DetailedTask::new(task, TaskPayload::InputRequired { input_requests })
            }
            JobState::Queued | JobState::Running => DetailedTask::new(task, TaskPayload::Working),
        });
    }
    let record = jobs.record_of(&id).await.map_err(unknown(task_id))?;
    let task = stored_task(&record);
    match jobs
        .stored_finished(&record)
        .await
        .map_err(unknown(task_id))?
    {
        Some(finished) => Ok(ended(task, &id, &finished, budget)),
        None => Ok(DetailedTask::new(task, TaskPayload::Working)),
    }
}

/// `tasks/update`: the person's answers to the task's questions; an answer to a question
/// no longer asked (its time ran out) is ignored.
pub async fn update(
    jobs: &Jobs,
    board: &Board,
    task_id: &str,
    responses: &InputResponses,
) -> Result<(), ErrorData> {
    let id = task_job_id(task_id)?;
    if jobs.live(&id).is_none() {
        jobs.record_of(&id).await.map_err(unknown(task_id))?;
    }
    board.answer(std::slice::from_ref(&id), responses);
    Ok(())
}

/// `tasks/cancel`: cooperative, as the extension says; the job may still end completed.
pub async fn cancel(jobs: &Jobs, task_id: &str) -> Result<(), ErrorData> {
    let id = task_job_id(task_id)?;
    match jobs.live(&id) {
        Some(job) => job.stop(StopReason::JobCancel),
        None => {
            jobs.request_cancel(&id).await.map_err(unknown(task_id))?;
        }
    }
    Ok(())
}

fn ended(task: Task, id: &JobId, finished: &Finished, budget: usize) -> DetailedTask {
    let mut task = task;
    task.last_updated_at = timestamp(SystemTime::now());
    task.status_message = None;
    // A run that failed is still a completed task whose result is an error result: `failed`
    // is for JSON-RPC errors.
    let payload = match finished.status {
        JobStatus::Cancelled => TaskPayload::Cancelled,
        _ => TaskPayload::Completed {
            result: as_object(JobReport::finished(id, finished, budget).into_result()),
        },
    };
    DetailedTask::new(task, payload)
}

fn stored_task(record: &JobRecord) -> Task {
    let at = |ms: u64| timestamp(SystemTime::UNIX_EPOCH + Duration::from_millis(ms));
    let created = at(record.created_ms);
    let updated = at(record.finished_ms.unwrap_or(record.created_ms));
    let mut task = Task::new(record.id.to_string(), TaskStatus::Working, created, updated)
        .with_poll_interval_ms(POLL_INTERVAL_MS);
    task.status_message = record.progress.clone();
    task
}

fn as_object(result: rmcp::model::CallToolResult) -> JsonObject {
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

fn timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

fn task_job_id(task_id: &str) -> Result<JobId, ErrorData> {
    task_id
        .parse()
        .map_err(|_| ErrorData::invalid_params(format!("unknown task `{task_id}`"), None))
}

/// An unknown task is -32602, as the extension requires; a store failure says what it is.
fn unknown(task_id: &str) -> impl Fn(JobsError) -> ErrorData + '_ {
    move |error| match error {
        JobsError::Unknown(_) => {
            ErrorData::invalid_params(format!("unknown task `{task_id}`"), None)
        }
        other => ErrorData::internal_error(other.to_string(), None),
    }
}
