//! `job_result`: a job's whole answer or transcript, paged.

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::job::{JobToolContext, JobToolError, parse_id};
use crate::jobs::JobState;
use crate::jobs::store::{JobId, JobStatus, TextPage, TreeSummary};
use crate::mcp::result::JobReport;

pub(super) const DESCRIPTION: &str = "A job's whole answer, paged: offset and limit count characters, so the \
    pages put together are the answer exactly. With transcript: true, its events as JSON \
    lines instead, offset and limit counting events.";

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
    /// Where the job worked and what it changed: `job_diff` shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    tree: Option<TreeSummary>,
}

pub(super) async fn result(
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
    let (record, page) = jobs.page(&id, args.transcript, args.offset, limit).await?;
    let TextPage {
        text,
        offset,
        total,
        next_offset,
    } = page;
    let page = Page {
        job_id: id,
        status: record.status,
        tree: record.tree,
        part,
        offset,
        total,
        next_offset,
        text,
    };
    let footer = footer(&page, args.transcript);
    let mut result = CallToolResult::success(vec![
        ContentBlock::text(page.text.clone()),
        ContentBlock::text(footer),
    ]);
    result.structured_content = serde_json::to_value(&page).ok();
    Ok(result)
}

/// Where the page lies in the whole, and the call that gets the next one.
fn footer(page: &Page, transcript: bool) -> String {
    let Page {
        job_id: id,
        part,
        offset,
        total,
        next_offset,
        ..
    } = page;
    let unit = if transcript { "events" } else { "characters" };
    let end = next_offset.unwrap_or(*total);
    let mut footer = format!(
        "[{part} of job {id} ({}): {unit} {offset} to {end} of {total}",
        page.status.name()
    );
    match next_offset {
        Some(next) => footer.push_str(&format!(
            "; next page: job_result {{\"job_id\": \"{id}\", \"offset\": {next}{}}}]",
            if transcript {
                ", \"transcript\": true"
            } else {
                ""
            }
        )),
        None => footer.push_str("; the end]"),
    }
    if let Some(tree) = &page.tree {
        footer.push_str(&format!("\n[{}]", tree_line(id, tree)));
    }
    footer
}

/// A job's tree in one line, with the call that shows its changes.
fn tree_line(id: &JobId, tree: &TreeSummary) -> String {
    let mut line = format!("isolation {} ({})", tree.isolation, tree.state);
    if let (Some(path), Some(branch)) = (&tree.worktree, &tree.branch) {
        line.push_str(&format!(", worktree {} on branch {branch}", path.display()));
    }
    if let Some(files) = tree.files_changed {
        line.push_str(&format!(
            "; changes: {files} files (+{} -{}), job_diff {{\"job_id\": \"{id}\"}} shows them",
            tree.lines_added.unwrap_or(0),
            tree.lines_removed.unwrap_or(0)
        ));
    }
    line
}
