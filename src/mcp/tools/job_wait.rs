//! `job_wait`: wait for jobs and return each finished one's answer, or what it has by the
//! deadline.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::time::Instant;

use super::job_context::{JobToolContext, JobToolError, parse_id};
use crate::changes_report::overlaps;
use crate::jobs::store::{JobId, JobRecord};
use crate::jobs::{Finished, Job, JobState, Jobs};
use crate::mcp::result::{JobReport, error_result};

/// How long `job_wait` waits unless told otherwise: under the 60 s the hosts allow a call.
const DEFAULT_WAIT: Duration = Duration::from_secs(40);
/// The longest wait a caller may ask for.
const MAX_WAIT_SECS: u64 = 3600;
const MAX_WAIT_JOBS: usize = 100;

pub(super) const DESCRIPTION: &str = "Wait for jobs and return each finished one's answer. \
    mode all (default): until every job ends; any: until one does. After timeout_secs it returns \
    what it has: call again to wait on. It returns early when a job waits for the person \
    (status needs_input): tell them; no tool answers it. Cancelling it leaves the jobs running.";

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)] // no `$defs` and `$ref` around one enum
pub enum WaitMode {
    #[default]
    All,
    Any,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    pub job_ids: Vec<String>,
    #[serde(default)]
    pub mode: WaitMode,
    /// Default 40.
    #[schemars(range(min = 1, max = 3600))]
    pub timeout_secs: Option<u64>,
}

/// A job to wait for: this server's, or another's seen through the store.
enum Watched {
    Live(Arc<Job>),
    Stored(Box<JobRecord>, Option<Arc<Finished>>),
}

pub(super) async fn wait(
    args: WaitArgs,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    let jobs = context.jobs;
    let mut watched = watch(jobs, &args.job_ids).await?;
    let timeout = args.timeout_secs.map_or(DEFAULT_WAIT, |secs| {
        Duration::from_secs(secs.clamp(1, MAX_WAIT_SECS))
    });
    let deadline = Instant::now() + timeout;
    // Told once: a job already waiting on the person when the call began does not end it.
    let waiting_before = waiting(&watched);
    loop {
        let ended_signal = jobs.ended_or_parked();
        tokio::pin!(ended_signal);
        ended_signal.as_mut().enable();
        refresh_stored(jobs, &mut watched).await?;
        let ended = watched.iter().filter(|w| is_ended(w)).count();
        let done = match args.mode {
            WaitMode::All => ended == watched.len(),
            WaitMode::Any => ended > 0,
        };
        let newly_waiting = waiting(&watched)
            .iter()
            .any(|asked| !waiting_before.contains(asked));
        if done || newly_waiting || Instant::now() >= deadline {
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

/// The jobs a `job_wait` call's `arguments` name, as far as they are well formed (the call
/// itself says what is wrong with the rest).
pub fn waited_jobs(arguments: Option<&rmcp::model::JsonObject>) -> Vec<JobId> {
    let named = arguments.and_then(|arguments| arguments.get("job_ids"));
    let Some(ids) = named.and_then(serde_json::Value::as_array) else {
        return Vec::new();
    };
    ids.iter()
        .filter_map(|id| parse_id(id.as_str()?).ok())
        .collect()
}

/// The jobs named by `job_ids`, from memory when this server runs them, else from the store.
async fn watch(jobs: &Jobs, job_ids: &[String]) -> Result<Vec<Watched>, JobToolError> {
    if job_ids.is_empty() || job_ids.len() > MAX_WAIT_JOBS {
        return Err(JobToolError::WaitCount {
            got: job_ids.len(),
            max: MAX_WAIT_JOBS,
        });
    }
    let ids = job_ids
        .iter()
        .map(|id| parse_id(id))
        .collect::<Result<Vec<_>, _>>()?;
    let mut watched = Vec::with_capacity(ids.len());
    for id in ids {
        watched.push(match jobs.live(&id) {
            Some(job) => Watched::Live(job),
            None => Watched::Stored(Box::new(jobs.record_of(&id).await?), None),
        });
    }
    Ok(watched)
}

/// Each watched job waiting on the person, with the question it waits on.
fn waiting(watched: &[Watched]) -> Vec<(JobId, String)> {
    let question = |entry: &Watched| match entry {
        Watched::Live(job) => Some((job.id.clone(), job.waiting_for()?)),
        Watched::Stored(record, None) => {
            let parked = record.waiting_for.as_ref()?;
            Some((record.id.clone(), parked.asked.clone()))
        }
        Watched::Stored(_, Some(_)) => None,
    };
    watched.iter().filter_map(question).collect()
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
            Watched::Stored(record, finished) => {
                JobReport::of_record(record, finished.as_deref(), share)
            }
        })
        .collect();
    let mut text = format!("{ended} of {} jobs ended.", reports.len());
    let overlaps = overlaps(
        reports
            .iter()
            .filter_map(|report| Some((&report.job_id, report.changes.as_ref()?))),
    );
    for overlap in &overlaps {
        text.push_str(&format!("\n{}", overlap.text()));
    }
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
        "overlaps": overlaps,
    }));
    result
}
