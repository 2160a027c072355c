//! `job_cancel`: stop a job, this server's or, through the store, another's.

use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;

use super::job_context::{JobToolContext, JobToolError, parse_id};
use crate::jobs::store::{CancelRequest, JobId, JobStatus};
use crate::jobs::{JobState, StopReason};
use crate::mcp::result::JobReport;

/// How long `job_cancel` waits for the job's tree to be gone before answering.
const CANCEL_WAIT: Duration = Duration::from_secs(15);

pub(super) const DESCRIPTION: &str = "Cancel a job: stops its agent and every process it \
    started, or takes it off the queue.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelArgs {
    pub job_id: String,
}

pub(super) async fn cancel(
    args: CancelArgs,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    let id = parse_id(&args.job_id)?;
    let jobs = context.jobs;
    if let Some(job) = jobs.live(&id) {
        if let JobState::Finished(finished) = job.state() {
            return Ok(already_ended(&id, finished.status));
        }
        job.stop(StopReason::JobCancel);
        let ended = tokio::time::timeout(CANCEL_WAIT, job.finished()).await;
        let report = JobReport::of_job(&job, context.budget);
        let mut result = report.into_result();
        if ended.is_err() {
            result.content.insert(0, ContentBlock::text(format!(
                "job {id} is stopping: its processes had not all ended after {} s; job_wait shows when it has",
                CANCEL_WAIT.as_secs()
            )));
        }
        result.is_error = Some(false);
        return Ok(result);
    }
    let text = match jobs.request_cancel(&id).await? {
        CancelRequest::Requested { owner } => format!(
            "asked the server that runs job {id} (pid {}) to cancel it; job_wait shows when it has ended",
            owner.pid
        ),
        CancelRequest::AlreadyFinished(status) => return Ok(already_ended(&id, status)),
        CancelRequest::OwnerGone => format!(
            "the server that ran job {id} is gone, so nothing of it runs any more; it is recorded interrupted"
        ),
    };
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

fn already_ended(id: &JobId, status: JobStatus) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(format!(
        "job {id} had already ended ({}); nothing to cancel. job_result returns its answer",
        status.name()
    ))])
}
