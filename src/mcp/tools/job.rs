//! The job tools as MCP tools (which they are is [`crate::offer::JobTool`]): their
//! descriptions and schemas, and the dispatch to one file per tool (what they share is in
//! [`super::job_context`]). They work on this server's jobs from memory and on every other job
//! (another server's, a finished one) from the store.

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::job_context::{JobToolContext, JobToolError};
use super::{
    arguments_schema, job_apply, job_cancel, job_diff, job_discard, job_list, job_result,
    job_revert, job_wait,
};
use crate::mcp::result::error_result;
use crate::offer::JobTool;

/// The MCP tool of a job tool: its description, its arguments' schema and whether it only
/// reads.
pub fn tool(job: JobTool) -> Tool {
    let (description, schema, read_only) = match job {
        JobTool::Wait => (job_wait::DESCRIPTION, schema::<job_wait::WaitArgs>(), true),
        JobTool::Result => (
            job_result::DESCRIPTION,
            schema::<job_result::ResultArgs>(),
            true,
        ),
        JobTool::Cancel => (
            job_cancel::DESCRIPTION,
            schema::<job_cancel::CancelArgs>(),
            false,
        ),
        JobTool::List => (job_list::DESCRIPTION, schema::<job_list::ListArgs>(), true),
        JobTool::Diff => (job_diff::DESCRIPTION, schema::<job_diff::DiffArgs>(), true),
        JobTool::Apply => (
            job_apply::DESCRIPTION,
            schema::<job_apply::MergeArgs>(),
            false,
        ),
        JobTool::Discard => (
            job_discard::DESCRIPTION,
            schema::<job_discard::DiscardArgs>(),
            false,
        ),
        JobTool::Revert => (
            job_revert::DESCRIPTION,
            schema::<job_apply::MergeArgs>(),
            false,
        ),
    };
    let mut tool = Tool::new(job.name(), description, schema);
    tool.annotations = Some(
        ToolAnnotations::new()
            .read_only(read_only)
            .open_world(false),
    );
    tool
}

fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    Arc::new(arguments_schema::<T>())
}

pub async fn call(
    tool: JobTool,
    arguments: Option<JsonObject>,
    context: JobToolContext<'_>,
) -> CallToolResult {
    let arguments = Value::Object(arguments.unwrap_or_default());
    dispatch(tool, arguments, &context)
        .await
        .unwrap_or_else(|error| error_result(error.to_string()))
}

async fn dispatch(
    tool: JobTool,
    arguments: Value,
    context: &JobToolContext<'_>,
) -> Result<CallToolResult, JobToolError> {
    match tool {
        JobTool::Wait => job_wait::wait(parse(tool, arguments)?, context).await,
        JobTool::Result => job_result::result(parse(tool, arguments)?, context).await,
        JobTool::Cancel => job_cancel::cancel(parse(tool, arguments)?, context).await,
        JobTool::List => job_list::list(parse(tool, arguments)?, context).await,
        JobTool::Diff => job_diff::diff(parse(tool, arguments)?, context).await,
        JobTool::Apply => job_apply::apply(parse(tool, arguments)?, context).await,
        JobTool::Discard => job_discard::discard(parse(tool, arguments)?, context).await,
        JobTool::Revert => job_revert::revert(parse(tool, arguments)?, context).await,
    }
}

pub(super) fn parse<T: DeserializeOwned>(
    tool: JobTool,
    arguments: Value,
) -> Result<T, JobToolError> {
    serde_json::from_value(arguments).map_err(|source| JobToolError::Invalid {
        tool: tool.name(),
        source,
    })
}
