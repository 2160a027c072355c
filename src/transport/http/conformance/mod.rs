//! The fixtures the MCP conformance suite calls: tools, resources and prompts with the fixed
//! names and answers its scenarios check. Compiled only with the `conformance-fixtures`
//! feature (the conformance tests' build, `scripts/test conformance`), never into a release,
//! and even then offered only with the hidden `serve --http … --conformance-fixtures`.
//!
//! [`Fixtured`] is the HTTP handler then: it answers the fixtures' names itself and passes
//! everything else to the agents' handler, so the fixtures go through the same server,
//! transport and limits as the agent tools. One file per family of fixtures: `tools` (the
//! `tools-call-*` scenarios, with `elicitation`'s forms), `documents` (resources and
//! prompts), `asking` (the `input-required-result-*` scenarios and the diagnostic tools of
//! `server-stateless`, on `input_required`'s rounds, whose states `sealed` protects),
//! `task_tools` (the tasks extension's scenarios, whose tasks `task_table` keeps) and
//! `schemas` (two tools whose point is their input schema).

mod asking;
mod documents;
mod elicitation;
mod handler;
mod input_required;
mod schemas;
mod sealed;
mod task_table;
mod task_tools;
mod tool_change;
mod tools;

use rmcp::model::JsonObject;

pub use self::handler::Fixtured;
pub use self::sealed::NoKey;
use self::sealed::Sealer;
use self::task_table::TaskTable;

/// What the fixtures keep for the server's life, shared by every session and request.
pub struct Fixtures {
    sealer: Sealer,
    tasks: TaskTable,
    tool_change: tool_change::ToolChange,
}

impl std::fmt::Debug for Fixtures {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The sealing key stays out of every log.
        formatter.debug_struct("Fixtures").finish_non_exhaustive()
    }
}

impl Fixtures {
    pub fn new() -> Result<Self, NoKey> {
        Ok(Self {
            sealer: Sealer::random()?,
            tasks: TaskTable::default(),
            tool_change: tool_change::ToolChange::default(),
        })
    }
}

/// A fixture tool's input schema: an object of `properties`, none of them required.
fn input_schema(properties: serde_json::Value) -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), properties);
    schema
}
