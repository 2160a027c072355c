//! The job tools: `job_wait`, `job_result`, `job_cancel`, `job_list`. They work on this
//! server's jobs from memory and on every other job (another server's, a finished one) from
//! the store.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::result::{JobReport, error_result};
use super::tools::arguments_schema;
use crate::jobs::store::{
    BadJobId, CancelRequest, JobId, JobRecord, JobStatus, ListFilter, TextPage, now_ms,
};
use crate::jobs::{Finished, Job, JobProgress, JobState, Jobs, JobsError, StopReason};

/// How long `job_wait` waits unless told otherwise: under the 60 s the hosts allow a call.
const DEFAULT_WAIT: Duration = Duration::from_secs(40);
/// The longest wait a caller may ask for.
const MAX_WAIT_SECS: u64 = 3600;
/// How long `job_cancel` waits for the job's tree to be gone before answering.
const CANCEL_WAIT: Duration = Duration::from_secs(15);
const DEFAULT_LIST: usize = 20;
const MAX_LIST: usize = 200;
const MAX_WAIT_JOBS: usize = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobTool {
    Wait,
    Result,
    Cancel,
    List,
}

impl JobTool {
    pub const ALL: [JobTool; 4] = [Self::Wait, Self::Result, Self::Cancel, Self::List];

    pub fn name(self) -> &'static str {
        match self {
            Self::Wait => "job_wait",
            Self::Result => "job_result",
            Self::Cancel => "job_cancel",
            Self::List => "job_list",
        }
    }

    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.name() == name)
    }

    pub fn tool(self) -> Tool {
        let (description, schema, read_only) = match self {
            Self::Wait => (WAIT, schema::<WaitArgs>(), true),
            Self::Result => (RESULT, schema::<ResultArgs>(), true),
            Self::Cancel => (CANCEL, schema::<CancelArgs>(), false),
            Self::List => (LIST, schema::<ListArgs>(), true),
        };
        let mut tool = Tool::new(self.name(), description, schema);
        tool.annotations = Some(
            ToolAnnotations::new()
                .read_only(read_only)
                .open_world(false),
        );
        tool
    }
}

const WAIT: &str = "Wait for jobs (background calls, or calls handed off while still running) \
    and return each finished job's answer. mode `all` (default) waits until every job has \
    ended, `any` until one has; after timeout_secs (default 40) it returns what it has, with \
    each unfinished job's status and last progress line: call it again to keep waiting. \
    Cancelling this call does not cancel the jobs.";
const RESULT: &str = "A job's whole answer, paged: offset and limit count characters, so the \
    pages put together are the answer exactly. With transcript: true, its events as JSON \
    lines instead, offset and limit counting events.";
const CANCEL: &str = "Cancel a job: stops its agent and every process it started (or takes it \
    off the queue) and records it cancelled.";
const LIST: &str = "Recent jobs, newest first, filtered by status, agent and workspace, paged \
    with offset and limit.";

fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    Arc::new(arguments_schema::<T>())
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WaitMode {
    #[default]
    All,
    Any,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// The jobs to wait for.
    pub job_ids: Vec<String>,
    #[serde(default)]
    pub mode: WaitMode,
    /// The longest to wait, in seconds (default 40).
    #[schemars(range(min = 1, max = 3600))]
    pub timeout_secs: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultArgs {
    pub job_id: String,
    /// Where the page starts (characters of the answer, or events of the transcript).
    #[serde(default)]
    pub offset: u64,
    /// The page's size (default: the server's result budget, or 200 events).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// The events as JSON lines instead of the answer.
    #[serde(default)]
    pub transcript: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelArgs {
    pub job_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// queued, running, completed, failed, cancelled, timed_out or interrupted.
    pub status: Option<String>,
    /// An agent's name: its tool's.
    pub agent: Option<String>,
    pub workspace: Option<PathBuf>,
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<usize>,
    #[serde(default)]
    pub offset: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum JobToolError {
    #[error("invalid arguments for {tool}: {source}. Its inputSchema lists what it takes")]
    Invalid {
        tool: &'static str,
        source: serde_json::Error,
    },
    #[error(transparent)]
    BadId(#[from] BadJobId),
    #[error("job_wait takes 1 to {MAX_WAIT_JOBS} job ids; it got {0}")]
    WaitCount(usize),
    #[error(transparent)]
    Jobs(#[from] JobsError),
    #[error("{0}")]
    BadStatus(String),
}

/// What a job tool needs of the server.
pub struct JobToolContext<'a> {
    pub jobs: &'a Arc<Jobs>,
    pub budget: usize,
    /// Fired when the client cancels the call.
    pub cancelled: &'a CancellationToken,
    /// Where `job_wait` reports how the wait goes.
    pub progress: JobProgress,
}

pub async fn call(
    tool: JobTool,
    arguments: Option<JsonObject>,
    context: JobToolContext<'_>,
) -> CallToolResult {
    let arguments = Value::Object(arguments.unwrap_or_default());
    dispatch(tool, arguments, &context)
        .await
        .unwrap_or_else(|error| error_result(error.to_string()))
}

async fn dispatch(
    tool: JobTool,
    arguments: Value,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    match tool {
        JobTool::Wait => wait(parse(tool, arguments)?, context).await,
        JobTool::Result => result(parse(tool, arguments)?, context).await,
        JobTool::Cancel => cancel(parse(tool, arguments)?, context).await,
        JobTool::List => list(parse(tool, arguments)?, context).await,
    }
}

fn parse<T: DeserializeOwned>(tool: JobTool, arguments: Value) -> Result<T, JobToolError> {
    serde_json::from_value(arguments).map_err(|source| JobToolError::Invalid {
        tool: tool.name(),
        source,
    })
}

fn parse_id(text: &str) -> Result<JobId, JobToolError> {
    text.trim().parse().map_err(JobToolError::BadId)
}

/// A job to wait for: this server's, or another's seen through the store.
enum Watched {
    Live(Arc<Job>),
    Stored(Box<JobRecord>, Option<Arc<Finished>>),
}

async fn wait(
    args: WaitArgs,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    if args.job_ids.is_empty() || args.job_ids.len() > MAX_WAIT_JOBS {
        return Err(JobToolError::WaitCount(args.job_ids.len()));
    }
    let ids = args
        .job_ids
        .iter()
        .map(|id| parse_id(id))
        .collect::<Result<Vec<_>, _>>()?;
    let jobs = context.jobs;
    let mut watched = Vec::with_capacity(ids.len());
    for id in ids {
        watched.push(match jobs.live(&id) {
            Some(job) => Watched::Live(job),
            None => Watched::Stored(Box::new(jobs.record_of(&id).await?), None),
        });
    }
    let timeout = args.timeout_secs.map_or(DEFAULT_WAIT, |secs| {
        Duration::from_secs(secs.clamp(1, MAX_WAIT_SECS))
    });
    let deadline = Instant::now() + timeout;
    loop {
        let ended_signal = jobs.ended();
        tokio::pin!(ended_signal);
        ended_signal.as_mut().enable();
        refresh_stored(jobs, &mut watched).await?;
        let ended = watched.iter().filter(|w| is_ended(w)).count();
        let done = match args.mode {
            WaitMode::All => ended == watched.len(),
            WaitMode::Any => ended > 0,
        };
        if done || Instant::now() >= deadline {
            return Ok(wait_result(&watched, context.budget, ended));
        }
        context
            .progress
            .set(format!("{ended} of {} jobs ended", watched.len()));
        let stored_unfinished = watched
            .iter()
            .any(|w| matches!(w, Watched::Stored(_, None)));
        tokio::select! {
            () = &mut ended_signal => {}
            () = tokio::time::sleep(crate::jobs::STORE_POLL), if stored_unfinished => {}
            () = tokio::time::sleep_until(deadline) => {}
            () = context.cancelled.cancelled() => {
                return Ok(error_result("job_wait was cancelled; the jobs carry on".to_owned()));
            }
        }
    }
}

fn is_ended(watched: &Watched) -> bool {
    match watched {
        Watched::Live(job) => matches!(job.state(), JobState::Finished(_)),
        Watched::Stored(_, finished) => finished.is_some(),
    }
}

/// Look up the jobs of other servers that have ended since the last look.
async fn refresh_stored(jobs: &Jobs, watched: &mut [Watched]) -> Result<(), JobToolError> {
    for entry in watched.iter_mut() {
        if let Watched::Stored(record, finished @ None) = entry {
            **record = jobs.record_of(&record.id).await?;
            *finished = jobs.stored_finished(record).await?;
        }
    }
    Ok(())
}

fn wait_result(watched: &[Watched], budget: usize, ended: usize) -> CallToolResult {
    let share = budget / ended.max(1);
    let reports: Vec<JobReport> = watched
        .iter()
        .map(|entry| match entry {
            Watched::Live(job) => JobReport::of_job(job, share),
            Watched::Stored(record, Some(finished)) => {
                JobReport::finished(&record.id, finished, share)
            }
            Watched::Stored(record, None) => JobReport::unfinished(
                &record.id,
                &record.agent,
                record.status,
                now_ms().saturating_sub(record.created_ms) / 1000,
                record.progress.clone(),
            ),
        })
        .collect();
    let mut text = format!("{ended} of {} jobs ended.", reports.len());
    for report in &reports {
        text.push_str(&format!(
            "\n\n## {} ({}): {}\n\n{}",
            report.job_id,
            report.agent,
            report.status,
            report.text().join("\n\n")
        ));
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(serde_json::json!({
        "ended": ended,
        "unfinished": reports.len() - ended,
        "jobs": reports,
    }));
    result
}

/// A page of a job's answer or transcript.
#[derive(Debug, Serialize)]
struct Page {
    job_id: JobId,
    status: JobStatus,
    part: &'static str,
    offset: u64,
    total: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<u64>,
    text: String,
}

async fn result(
    args: ResultArgs,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    let id = parse_id(&args.job_id)?;
    let jobs = context.jobs;
    if let Some(job) = jobs.live(&id)
        && !matches!(job.state(), JobState::Finished(_))
    {
        return Ok(JobReport::of_job(&job, context.budget).into_result());
    }
    let (part, default_limit) = if args.transcript {
        ("transcript", 200)
    } else {
        ("answer", context.budget as u64)
    };
    let limit = args.limit.unwrap_or(default_limit).max(1);
    let (status, page) = jobs.page(&id, args.transcript, args.offset, limit).await?;
    let TextPage {
        text,
        offset,
        total,
        next_offset,
    } = page;
    let unit = if args.transcript {
        "events"
    } else {
        "characters"
    };
    let end = next_offset.unwrap_or(total);
    let mut footer = format!(
        "[{part} of job {id} ({}): {unit} {offset} to {end} of {total}",
        status.name()
    );
    match next_offset {
        Some(next) => footer.push_str(&format!(
            "; next page: job_result {{\"job_id\": \"{id}\", \"offset\": {next}{}}}]",
            if args.transcript {
                ", \"transcript\": true"
            } else {
                ""
            }
        )),
        None => footer.push_str("; the end]"),
    }
    let page = Page {
        job_id: id.clone(),
        status,
        part,
        offset,
        total,
        next_offset,
        text,
    };
    let mut result = CallToolResult::success(vec![
        ContentBlock::text(page.text.clone()),
        ContentBlock::text(footer),
    ]);
    result.structured_content = serde_json::to_value(&page).ok();
    Ok(result)
}

async fn cancel(
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

/// One line of `job_list`.
#[derive(Debug, Serialize)]
struct Listed {
    job_id: JobId,
    agent: String,
    status: JobStatus,
    workspace: PathBuf,
    prompt: String,
    created_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    finished_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    progress: Option<String>,
}

impl From<JobRecord> for Listed {
    fn from(record: JobRecord) -> Self {
        Self {
            job_id: record.id,
            agent: record.agent,
            status: record.status,
            workspace: record.workspace,
            prompt: record.prompt_preview,
            created_ms: record.created_ms,
            finished_ms: record.finished_ms,
            progress: (!record.status.is_finished())
                .then_some(record.progress)
                .flatten(),
        }
    }
}

async fn list(
    args: ListArgs,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    let status = args
        .status
        .as_deref()
        .map(str::parse::<JobStatus>)
        .transpose()
        .map_err(JobToolError::BadStatus)?;
    let limit = args.limit.unwrap_or(DEFAULT_LIST).clamp(1, MAX_LIST);
    let filter = ListFilter {
        status,
        agent: args.agent,
        workspace: args.workspace,
        limit: limit + 1,
        offset: args.offset,
    };
    let mut records = context.jobs.list(filter).await?;
    let more = records.len() > limit;
    records.truncate(limit);
    let listed: Vec<Listed> = records.into_iter().map(Listed::from).collect();
    let mut text = if listed.is_empty() {
        "no jobs".to_owned()
    } else {
        listed
            .iter()
            .map(|job| {
                format!(
                    "{} {} {} {}: {}",
                    job.job_id,
                    job.agent,
                    job.status,
                    job.workspace.display(),
                    job.prompt
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let next_offset = more.then_some(args.offset + limit);
    if let Some(next) = next_offset {
        text.push_str(&format!("\n[more: job_list with offset {next}]"));
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content =
        Some(serde_json::json!({ "jobs": listed, "next_offset": next_offset }));
    Ok(result)
}
