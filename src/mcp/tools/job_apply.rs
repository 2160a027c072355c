//! `job_apply`: an isolated job's changes brought into the caller's workspace, all or nothing.

use cli_agent_engine::git::Merged;
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;

use super::job_context::{JobToolContext, JobToolError, blocking, parse_id};
use crate::changes_report::{merged_json, merged_text};
use crate::jobs::review;
use crate::jobs::store::JobId;

pub(super) const DESCRIPTION: &str = "Bring a worktree job's changes into its workspace, \
    uncommitted, by a three-way merge. Where the workspace changed the same lines since, it \
    refuses, names the files and changes nothing. check: true only says whether it would apply.";

/// The arguments of `job_apply` and `job_revert`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeArgs {
    pub job_id: String,
    /// Only find out whether it would go through; change nothing.
    #[serde(default)]
    pub check: bool,
}

pub(super) async fn apply(
    args: MergeArgs,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    let id = parse_id(&args.job_id)?;
    let store = context.jobs.store()?;
    let (of, check) = (id.clone(), args.check);
    let merged = blocking(move || review::apply(&store, &of, check)).await?;
    Ok(merged_result("apply", &id, &merged))
}

/// What an apply or revert did (or, checked, would do) to the workspace.
pub(super) fn merged_result(action: &str, id: &JobId, merged: &Merged) -> CallToolResult {
    let text = merged_text(action, id, merged);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(merged_json(action, id, merged));
    result
}
