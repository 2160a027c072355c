//! `cli-agent-mcp jobs diff|apply|discard|revert`: a job's changes reviewed from a shell, the
//! same operations as the MCP tools (`crate::jobs::review`), printed for a person or as JSON.

use std::io::Write;

use cli_agent_engine::git::Merged;

use super::{CommandError, print_json};
use crate::changes_report::{discarded_text, merged_json, merged_text};
use crate::jobs::review;
use crate::jobs::store::{JobId, Store};

pub(super) fn diff(
    store: &Store,
    id: &JobId,
    paths: &[String],
    json: bool,
) -> Result<(), CommandError> {
    let text = review::diff(store, id, paths)?;
    let mut out = std::io::stdout().lock();
    if json {
        return print_json(&mut out, &serde_json::json!({ "job_id": id, "diff": text }));
    }
    out.write_all(text.as_bytes())?;
    Ok(out.flush()?)
}

pub(super) fn apply(
    store: &Store,
    id: &JobId,
    check: bool,
    json: bool,
) -> Result<(), CommandError> {
    let merged = review::apply(store, id, check)?;
    report("apply", id, &merged, json)
}

pub(super) fn revert(
    store: &Store,
    id: &JobId,
    check: bool,
    json: bool,
) -> Result<(), CommandError> {
    let merged = review::revert(store, id, check)?;
    report("revert", id, &merged, json)
}

pub(super) fn discard(store: &Store, id: &JobId, json: bool) -> Result<(), CommandError> {
    let discarded = review::discard(store, id)?;
    let mut out = std::io::stdout().lock();
    if json {
        return print_json(&mut out, &discarded);
    }
    writeln!(out, "{}", discarded_text(&discarded))?;
    Ok(())
}

fn report(action: &str, id: &JobId, merged: &Merged, json: bool) -> Result<(), CommandError> {
    let mut out = std::io::stdout().lock();
    if json {
        return print_json(&mut out, &merged_json(action, id, merged));
    }
    writeln!(out, "{}", merged_text(action, id, merged))?;
    Ok(())
}
