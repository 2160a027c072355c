//! Jobs as MCP resources, so a host can pull a job into its context (an `@` mention) and hear
//! when it changes: `job://{job_id}` (the summary `job_wait` gives, as JSON),
//! `job://{job_id}/answer`, `job://{job_id}/transcript` (JSON lines) and `job://{job_id}/diff`
//! (only a job with changes). A read carries at most the server's result budget and says how
//! to read the rest with the job tools.

use std::fmt;

use rmcp::ErrorData;
use rmcp::model::{
    ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use serde_json::json;

use crate::jobs::review::{self, ReviewError};
use crate::jobs::store::{JobId, JobRecord, ListFilter, TextPage};
use crate::jobs::{Jobs, JobsError};
use crate::mcp::result::JobReport;

const SCHEME: &str = "job://";
/// How many jobs one `resources/list` page names.
const LIST_PAGE: usize = 50;
/// How many events one read of a transcript carries.
const TRANSCRIPT_EVENTS: u64 = 200;

/// Which document of a job a URI names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Summary,
    Answer,
    Transcript,
    Diff,
}

impl Part {
    const ALL: [Self; 4] = [Self::Summary, Self::Answer, Self::Transcript, Self::Diff];

    fn suffix(self) -> &'static str {
        match self {
            Self::Summary => "",
            Self::Answer => "/answer",
            Self::Transcript => "/transcript",
            Self::Diff => "/diff",
        }
    }

    fn mime(self) -> &'static str {
        match self {
            Self::Summary => "application/json",
            Self::Answer => "text/markdown",
            Self::Transcript => "application/jsonl",
            Self::Diff => "text/x-diff",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Summary => {
                "A job's status, answer (within the result budget), session id, \
                 error, usage and changes: what job_wait returns, as JSON."
            }
            Self::Answer => {
                "A finished job's answer; a long one is cut at the result budget, \
                 with the job_result call that reads the rest."
            }
            Self::Transcript => {
                "A job's events as JSON lines (the first 200, within the result budget; \
                 job_result with transcript: true pages the rest)."
            }
            Self::Diff => {
                "What a job changed, as a unified diff: only a job that ran in a git \
                 workspace or an isolated worktree has one."
            }
        }
    }

    fn template(self) -> ResourceTemplate {
        let name = format!("job{}", self.suffix().replace('/', "_"));
        ResourceTemplate::new(format!("{SCHEME}{{job_id}}{}", self.suffix()), name)
            .with_description(self.describe())
            .with_mime_type(self.mime())
    }
}

/// A URI of this server's resources, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobUri {
    pub id: JobId,
    pub part: Part,
}

impl JobUri {
    pub fn parse(uri: &str) -> Result<Self, ResourceError> {
        let not_ours = || ResourceError::NotOurs(uri.to_owned());
        let rest = uri.strip_prefix(SCHEME).ok_or_else(not_ours)?;
        let (id, suffix) = rest.split_once('/').unwrap_or((rest, ""));
        let part = Part::ALL
            .into_iter()
            .find(|part| part.suffix().trim_start_matches('/') == suffix)
            .ok_or_else(not_ours)?;
        let id = id.parse().map_err(|_| not_ours())?;
        Ok(Self { id, part })
    }
}

impl fmt::Display for JobUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}{}", self.id, self.part.suffix())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    #[error(
        "`{0}` is not a resource of this server: it offers job://{{job_id}}, \
         job://{{job_id}}/answer, job://{{job_id}}/transcript and job://{{job_id}}/diff, with \
         job ids from resources/list or job_list, and models://{{agent}}"
    )]
    NotOurs(String),
    #[error(
        "job {0} changed nothing this server can diff: only a job that ran in a git workspace \
         (or isolated in a worktree) has job://{0}/diff; read job://{0} instead"
    )]
    NoDiff(JobId),
    #[error(transparent)]
    Jobs(#[from] JobsError),
    #[error(transparent)]
    Review(#[from] ReviewError),
}

impl ResourceError {
    /// The MCP error: "resource not found" (with the URI) when the caller named something
    /// that is not there, an internal error when the store or git failed.
    pub fn into_error(self, uri: &str) -> ErrorData {
        let data = Some(json!({ "uri": uri }));
        match self {
            Self::NotOurs(_) | Self::NoDiff(_) | Self::Jobs(JobsError::Unknown(_)) => {
                ErrorData::resource_not_found(self.to_string(), data)
            }
            Self::Jobs(_) | Self::Review(_) => ErrorData::internal_error(self.to_string(), data),
        }
    }
}

pub fn templates() -> Vec<ResourceTemplate> {
    Part::ALL.into_iter().map(Part::template).collect()
}

/// A page of recent jobs, newest first: each job's summary and, once it has one, its answer.
/// The cursor is the offset of the next page.
pub async fn list(jobs: &Jobs, cursor: Option<&str>) -> Result<ListResourcesResult, ErrorData> {
    let offset = match cursor {
        None => 0,
        Some(cursor) => cursor.parse::<usize>().map_err(|_| {
            ErrorData::invalid_params(
                format!("`{cursor}` is not a cursor of resources/list: pass its nextCursor back"),
                None,
            )
        })?,
    };
    let mut records = recent(jobs, LIST_PAGE + 1, offset)
        .await
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    let more = records.len() > LIST_PAGE;
    records.truncate(LIST_PAGE);
    let resources = records.iter().flat_map(listed).collect();
    Ok(ListResourcesResult {
        resources,
        next_cursor: more.then(|| (offset + LIST_PAGE).to_string()),
        ..ListResourcesResult::default()
    })
}

/// The newest jobs, whatever their status, agent or workspace.
pub async fn recent(jobs: &Jobs, limit: usize, offset: usize) -> Result<Vec<JobRecord>, JobsError> {
    let filter = ListFilter {
        status: None,
        agent: None,
        workspace: None,
        limit,
        offset,
    };
    jobs.list(filter).await
}

fn listed(record: &JobRecord) -> Vec<Resource> {
    let resource = |part: Part, name: String| {
        let uri = JobUri {
            id: record.id.clone(),
            part,
        };
        Resource::new(uri.to_string(), name)
            .with_description(format!(
                "{} {}: {}",
                record.agent, record.status, record.prompt_preview
            ))
            .with_mime_type(part.mime())
    };
    let mut resources = vec![resource(Part::Summary, format!("job {}", record.id))];
    if record.answer_chars > 0 {
        resources.push(resource(
            Part::Answer,
            format!("answer of job {}", record.id),
        ));
    }
    resources
}

/// Read one of a job's documents, within `budget` characters.
pub async fn read(jobs: &Jobs, uri: &str, budget: usize) -> Result<ReadResourceResult, ErrorData> {
    let contents = read_contents(jobs, uri, budget)
        .await
        .map_err(|error| error.into_error(uri))?;
    Ok(ReadResourceResult::new(contents))
}

async fn read_contents(
    jobs: &Jobs,
    uri: &str,
    budget: usize,
) -> Result<Vec<ResourceContents>, ResourceError> {
    let job = JobUri::parse(uri)?;
    let text = match job.part {
        Part::Summary => summary(jobs, &job.id, budget).await?,
        Part::Answer => answer(jobs, &job.id, budget).await?,
        Part::Transcript => transcript(jobs, &job.id, budget).await?,
        Part::Diff => diff(jobs, &job.id, budget).await?,
    };
    Ok(vec![
        ResourceContents::text(text, job.to_string()).with_mime_type(job.part.mime()),
    ])
}

/// What `job_wait` reports of the job, as JSON.
async fn summary(jobs: &Jobs, id: &JobId, budget: usize) -> Result<String, ResourceError> {
    let report = match jobs.live(id) {
        Some(job) => JobReport::of_job(&job, budget),
        None => {
            let record = jobs.record_of(id).await?;
            let finished = jobs.stored_finished(&record).await?;
            JobReport::of_record(&record, finished.as_deref(), budget)
        }
    };
    serde_json::to_string_pretty(&report)
        .map_err(|error| ResourceError::Jobs(JobsError::Lookup(error.to_string())))
}

async fn answer(jobs: &Jobs, id: &JobId, budget: usize) -> Result<String, ResourceError> {
    let (record, page) = jobs.page(id, false, 0, budget.max(1) as u64).await?;
    if !record.status.is_finished() {
        return Ok(format!(
            "[job {id} is {}: its answer comes when it ends; wait for it with job_wait \
             {{\"job_ids\": [\"{id}\"]}} or subscribe to job://{id}]",
            record.status
        ));
    }
    Ok(with_footer(page, |next, total| {
        format!(
            "\n\n[the answer goes on: characters 0 to {next} of {total} shown; read the rest \
             with job_result {{\"job_id\": \"{id}\", \"offset\": {next}}}]"
        )
    }))
}

async fn transcript(jobs: &Jobs, id: &JobId, budget: usize) -> Result<String, ResourceError> {
    let (_, page) = jobs.page(id, true, 0, TRANSCRIPT_EVENTS).await?;
    // A note would break the JSON lines: the rest is named in the resource's description.
    Ok(whole_lines_within(page.text, budget))
}

/// The first lines of `text` that fit in `budget` characters (at least one), so every line
/// kept is still whole JSON.
fn whole_lines_within(text: String, budget: usize) -> String {
    if text.chars().count() <= budget {
        return text;
    }
    let mut kept = String::new();
    let mut chars = 0;
    for line in text.split_inclusive('\n') {
        chars += line.chars().count();
        if chars > budget && !kept.is_empty() {
            break;
        }
        kept.push_str(line);
    }
    kept
}

async fn diff(jobs: &Jobs, id: &JobId, budget: usize) -> Result<String, ResourceError> {
    let record = jobs.record_of(id).await?;
    if record.tree.is_none() {
        return Err(ResourceError::NoDiff(id.clone()));
    }
    let store = jobs.store()?;
    let of = id.clone();
    let text = tokio::task::spawn_blocking(move || review::diff(&store, &of, &[]))
        .await
        .map_err(|error| JobsError::Lookup(error.to_string()))??;
    let page = TextPage::of_chars(&text, 0, budget as u64);
    Ok(with_footer(page, |next, total| {
        format!(
            "\n[the diff goes on: characters 0 to {next} of {total} shown; read the rest with \
             job_diff {{\"job_id\": \"{id}\", \"offset\": {next}}}]"
        )
    }))
}

/// A first page's text, and where it stops short, how to read the rest.
fn with_footer(page: TextPage, footer: impl FnOnce(u64, u64) -> String) -> String {
    let mut text = page.text;
    if let Some(next) = page.next_offset {
        text.push_str(&footer(next, page.total));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_uri_reads_back_as_written() {
        let id = JobId::random();
        for part in Part::ALL {
            let uri = JobUri {
                id: id.clone(),
                part,
            };
            assert_eq!(JobUri::parse(&uri.to_string()).unwrap(), uri);
        }
    }

    #[test]
    fn a_transcript_over_the_budget_keeps_whole_lines() {
        let text = "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n".to_owned();
        assert_eq!(whole_lines_within(text.clone(), 100), text);
        assert_eq!(
            whole_lines_within(text.clone(), 17),
            "{\"a\":1}\n{\"b\":2}\n"
        );
        assert_eq!(
            whole_lines_within(text, 3),
            "{\"a\":1}\n",
            "one line at least"
        );
    }

    #[test]
    fn other_uris_are_not_ours() {
        for uri in [
            "file:///etc/passwd",
            "job://nope",
            "job://job_aaaaaaaaaaaaaaaa/other",
        ] {
            assert!(matches!(JobUri::parse(uri), Err(ResourceError::NotOurs(_))));
        }
    }
}
