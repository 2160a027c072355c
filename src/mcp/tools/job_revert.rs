//! `job_revert`: an in-place job's changes taken out of the workspace again, all or nothing.

use rmcp::model::CallToolResult;

use super::job_apply::{MergeArgs, merged_result};
use super::job_context::{JobToolContext, JobToolError, blocking, parse_id};
use crate::jobs::review;

pub(super) const DESCRIPTION: &str = "Undo the changes of a job that ran in its workspace \
    (isolation none). Where a file changed since in a way that conflicts, it refuses, names the \
    files and changes nothing. check: true only says whether it would go through.";

pub(super) async fn revert(
    args: MergeArgs,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    let id = parse_id(&args.job_id)?;
    let store = context.jobs.store()?;
    let (of, check) = (id.clone(), args.check);
    let merged = blocking(move || review::revert(&store, &of, check)).await?;
    Ok(merged_result("revert", &id, &merged))
}
