//! `job_list`: recent jobs, newest first, filtered and paged.

use std::path::PathBuf;

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::job_context::{JobToolContext, JobToolError};
use crate::jobs::store::{JobId, JobRecord, JobStatus, ListFilter};

const DEFAULT_LIST: usize = 20;
const MAX_LIST: usize = 200;

pub(super) const DESCRIPTION: &str = "Recent jobs, newest first, filtered by status, agent and workspace, paged \
    with offset and limit.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// queued, running, completed, failed, cancelled, timed_out or interrupted.
    pub status: Option<String>,
    pub agent: Option<String>,
    pub workspace: Option<PathBuf>,
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<usize>,
    #[serde(default)]
    pub offset: usize,
}

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

pub(super) async fn list(
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
