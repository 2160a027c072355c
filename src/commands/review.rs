//! `cli-agent-mcp jobs diff|apply|discard|revert`: a job's changes reviewed from a shell, the
//! same operations as the MCP tools (`crate::jobs::review`), printed for a person or as JSON.

use std::io::Write;

use cli_agent_engine::git::Merged;
use serde_json::json;

use super::jobs::{CommandError, print_json};
use crate::jobs::review;
use crate::jobs::store::{JobId, Store};
use crate::mcp::changes::describe_files;

pub(super) fn diff(store: &Store, id: &JobId, paths: &[String], json: bool) -> Result<(), CommandError> {
    let text = review::diff(store, id, paths)?;
    let mut out = std::io::stdout().lock();
    if json {
        return print_json(&mut out, &json!({ "job_id": id, "diff": text }));
    }
    out.write_all(text.as_bytes())?;
    Ok(out.flush()?)
}

pub(super) fn apply(store: &Store, id: &JobId, check: bool, json: bool) -> Result<(), CommandError> {
    let merged = review::apply(store, id, check)?;
    report("apply", id, &merged, json)
}

pub(super) fn revert(store: &Store, id: &JobId, check: bool, json: bool) -> Result<(), CommandError> {
    let merged = review::revert(store, id, check)?;
    report("revert", id, &merged, json)
}

pub(super) fn discard(store: &Store, id: &JobId, json: bool) -> Result<(), CommandError> {
    let discarded = review::discard(store, id)?;
    let mut out = std::io::stdout().lock();
    if json {
        return print_json(&mut out, &discarded);
    }
    let removed = discarded
        .worktree
        .as_ref()
        .map_or("its worktree was gone already".to_owned(), |path| {
            format!("removed worktree {}", path.display())
        });
    writeln!(out, "discarded job {id}: {removed} and branch {}", discarded.branch)?;
    Ok(())
}

fn report(action: &str, id: &JobId, merged: &Merged, json: bool) -> Result<(), CommandError> {
    let mut out = std::io::stdout().lock();
    if json {
        return print_json(
            &mut out,
            &json!({ "job_id": id, "action": action, "written": merged.written, "changes": merged.changes }),
        );
    }
    let files = describe_files(&merged.changes);
    match (merged.written, merged.changes.is_empty()) {
        (_, true) => writeln!(out, "{action} of job {id}: nothing to change")?,
        (true, false) => writeln!(out, "{action} of job {id} done: {files}")?,
        (false, false) => writeln!(out, "{action} of job {id} would go through: {files}")?,
    }
    Ok(())
}
