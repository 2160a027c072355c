//! `job_diff`: what a job changed, as a unified diff, paged like `job_result`.

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::job_context::{JobToolContext, JobToolError, blocking, parse_id};
use crate::jobs::review;
use crate::jobs::store::{JobId, TextPage};

pub(super) const DESCRIPTION: &str = "What a job changed, as a unified diff, paged like \
    job_result; paths limits it to some files. An isolated job's worktree against where it \
    started; otherwise the workspace just before and after the run.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    pub job_id: String,
    /// Relative to the repository's top level.
    #[serde(default)]
    pub paths: Vec<String>,
    #[serde(default)]
    pub offset: u64,
    /// Default: the server's result budget.
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

#[derive(Debug, Serialize)]
struct DiffPage {
    job_id: JobId,
    offset: u64,
    total: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<u64>,
    diff: String,
}

pub(super) async fn diff(
    args: DiffArgs,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    let id = parse_id(&args.job_id)?;
    let store = context.jobs.store()?;
    let of = id.clone();
    let text = blocking(move || review::diff(&store, &of, &args.paths)).await?;
    let limit = args.limit.unwrap_or(context.budget as u64);
    let page = TextPage::of_chars(&text, args.offset, limit);
    let footer = match page.next_offset {
        _ if page.total == 0 => format!("[job {id} changed nothing in these files]"),
        Some(next) => format!(
            "[diff of job {id}: characters {} to {next} of {}; next page: job_diff \
             {{\"job_id\": \"{id}\", \"offset\": {next}}}]",
            page.offset, page.total
        ),
        None => format!(
            "[diff of job {id}: characters {} to {} of {}; the end]",
            page.offset, page.total, page.total
        ),
    };
    let page = DiffPage {
        job_id: id,
        offset: page.offset,
        total: page.total,
        next_offset: page.next_offset,
        diff: page.text,
    };
    let mut result = CallToolResult::success(vec![
        ContentBlock::text(page.diff.clone()),
        ContentBlock::text(footer),
    ]);
    result.structured_content = serde_json::to_value(&page).ok();
    Ok(result)
}
