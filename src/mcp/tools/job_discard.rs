//! `job_discard`: an isolated job's worktree and branch removed.

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;

use super::job_context::{JobToolContext, JobToolError, blocking, parse_id};
use crate::changes_report::discarded_text;
use crate::jobs::review;

pub(super) const DESCRIPTION: &str = "Drop a worktree job's work: its worktree and branch \
    go; job_diff still shows it.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiscardArgs {
    pub job_id: String,
}

pub(super) async fn discard(
    args: DiscardArgs,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    let id = parse_id(&args.job_id)?;
    let store = context.jobs.store()?;
    let discarded = blocking(move || review::discard(&store, &id)).await?;
    let text = discarded_text(&discarded);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = serde_json::to_value(&discarded).ok();
    Ok(result)
}
