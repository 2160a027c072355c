//! `completion/complete`: a prompt's agent arguments and a models URI's `agent` complete to
//! this server's agents, and a job URI's `job_id` to recent job ids.

use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};

use super::models_resource;
use super::prompts::PromptKind;
use super::resources;
use super::tools::Catalogue;
use crate::jobs::Jobs;

/// How many recent jobs a job id is completed from.
const RECENT_JOBS: usize = 200;

pub async fn complete(
    request: &CompleteRequestParams,
    catalogue: &Catalogue,
    jobs: &Jobs,
) -> Result<CompleteResult, ErrorData> {
    let argument = &request.argument;
    let candidates = match &request.r#ref {
        Reference::Prompt(prompt) => PromptKind::named(&prompt.name)
            .filter(|kind| kind.names_agents(&argument.name))
            .map(|_| agent_values(&argument.value, catalogue))
            .unwrap_or_default(),
        Reference::Resource(resource)
            if resource.uri.starts_with("job://") && argument.name == "job_id" =>
        {
            job_ids(&argument.value, jobs).await?
        }
        Reference::Resource(resource)
            if models_resource::agent_of(&resource.uri).is_some() && argument.name == "agent" =>
        {
            agent_values(&argument.value, catalogue)
        }
        _ => Vec::new(),
    };
    let total = candidates.len();
    let mut values = candidates;
    values.truncate(CompletionInfo::MAX_VALUES);
    let info = CompletionInfo::with_pagination(
        values,
        u32::try_from(total).ok(),
        total > CompletionInfo::MAX_VALUES,
    )
    .map_err(|error| ErrorData::internal_error(error, None))?;
    Ok(CompleteResult::new(info))
}

/// The agents whose names start with what was typed; in a comma-separated list, the last item
/// is completed and those before it kept.
fn agent_values(typed: &str, catalogue: &Catalogue) -> Vec<String> {
    let (before, last) = match typed.rsplit_once(',') {
        Some((before, last)) => (format!("{before}, "), last.trim_start()),
        None => (String::new(), typed.trim_start()),
    };
    catalogue
        .agent_names()
        .into_iter()
        .filter(|name| name.starts_with(last))
        .map(|name| format!("{before}{name}"))
        .collect()
}

/// Recent job ids starting with what was typed, newest first.
async fn job_ids(typed: &str, jobs: &Jobs) -> Result<Vec<String>, ErrorData> {
    let records = resources::recent(jobs, RECENT_JOBS, 0)
        .await
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    Ok(records
        .into_iter()
        .map(|record| record.id.as_str().to_owned())
        .filter(|id| id.starts_with(typed.trim()))
        .collect())
}
