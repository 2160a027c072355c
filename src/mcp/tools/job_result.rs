//! `job_result`: a job's whole answer or transcript, paged.

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::job_context::{JobToolContext, JobToolError, parse_id};
use crate::jobs::store::{JobId, JobRecord, JobStatus, TextPage, TreeSummary};
use crate::jobs::{JobState, Jobs};
use crate::mcp::result::JobReport;

pub(super) const DESCRIPTION: &str = "A job's whole answer in pages (offset and limit count \
    characters); the first page also carries what job_wait reports. transcript: true gives its \
    events as JSON lines instead (offset and limit count events).";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultArgs {
    pub job_id: String,
    // The description says what these count.
    #[serde(default)]
    pub offset: u64,
    /// Default: the server's result budget, or 200 events.
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    #[serde(default)]
    pub transcript: bool,
}

/// A page of a job's answer or transcript.
#[derive(Debug, Serialize)]
struct Page {
    #[serde(flatten)]
    of: PageOf,
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

/// Whose page it is: the job's id and status, or on the first page of its answer what
/// `job_wait` reports of it, but for the answer, which is the page.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum PageOf {
    Job { job_id: JobId, status: JobStatus },
    Report(Box<JobReport>),
}

impl PageOf {
    fn id(&self) -> &JobId {
        match self {
            Self::Job { job_id, .. } => job_id,
            Self::Report(report) => &report.job_id,
        }
    }

    /// The report's text but for the answer: the error with its hint, changes, the summary.
    fn text_besides_page(&self) -> Vec<String> {
        match self {
            Self::Job { .. } => Vec::new(),
            Self::Report(report) => report
                .error_text()
                .into_iter()
                .chain(report.text_besides_answer())
                .collect(),
        }
    }

    fn status(&self) -> JobStatus {
        match self {
            Self::Job { status, .. } => *status,
            Self::Report(report) => report.status,
        }
    }
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
    let report = match args.offset == 0 && !args.transcript {
        true => first_page_report(jobs, &record, context.budget).await?,
        false => None,
    };
    let of = match report {
        Some(report) => PageOf::Report(Box::new(report)),
        None => PageOf::Job {
            job_id: id,
            status: record.status,
        },
    };
    let page = Page {
        of,
        tree: record.tree,
        part,
        offset,
        total,
        next_offset,
        text,
    };
    Ok(page_result(&page, args.transcript))
}

/// The page as a tool result. The page comes first whatever the job's end, so a reader that
/// pages on content[0] gets the answer exactly; a failed job's page is still a successful read.
fn page_result(page: &Page, transcript: bool) -> CallToolResult {
    let texts = [page.text.clone(), footer(page, transcript)]
        .into_iter()
        .chain(page.of.text_besides_page());
    let mut result = CallToolResult::success(texts.map(ContentBlock::text).collect());
    result.structured_content = serde_json::to_value(page).ok();
    result
}

/// What `job_wait` reports of a finished job, without its answer (the page is the answer);
/// `None` when no outcome was recorded (its server was killed outright).
async fn first_page_report(
    jobs: &Jobs,
    record: &JobRecord,
    budget: usize,
) -> Result<Option<JobReport>, JobToolError> {
    let live = jobs.live(&record.id).and_then(|job| match job.state() {
        JobState::Finished(finished) => Some(finished),
        JobState::Queued | JobState::Running => None,
    });
    let finished = match live {
        Some(finished) => Some(finished),
        None => jobs.stored_finished(record).await?,
    };
    Ok(finished.map(|finished| JobReport {
        answer: None,
        ..JobReport::finished(&record.id, &finished, budget)
    }))
}

/// Where the page lies in the whole, and the call that gets the next one.
fn footer(page: &Page, transcript: bool) -> String {
    let Page {
        of,
        part,
        offset,
        total,
        next_offset,
        ..
    } = page;
    let id = of.id();
    let unit = if transcript { "events" } else { "characters" };
    let end = next_offset.unwrap_or(*total);
    let mut footer = format!(
        "[{part} of job {id} ({}): {unit} {offset} to {end} of {total}",
        of.status().name()
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
