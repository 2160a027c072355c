//! The tools the server offers: the agent tools (`agent`, one per CLI or custom agent, chosen
//! into a [`Catalogue`]) and the job tools (`job` and one file per tool: `job_wait`,
//! `job_result`, `job_cancel`, `job_list`, `job_diff`, `job_apply`, `job_discard`, `job_revert`). A new tool is a file here, named in [`job`] or the
//! catalogue. Called by the handler; calls `jobs`, `policy` and `result`.

mod agent;
mod job;
mod job_apply;
mod job_cancel;
mod job_context;
mod job_diff;
mod job_discard;
mod job_list;
mod job_result;
mod job_revert;
mod job_wait;

use std::sync::OnceLock;

use cli_agent_engine::Agent;
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde_json::Value;

#[cfg(test)]
pub use self::agent::ToolArgs;
use self::agent::tools;
pub use self::agent::{CallRequest, call_request, call_request_to_ask};
pub use self::job::{call as call_job_tool, tool as job_tool};
pub use self::job_context::JobToolContext;
pub use self::job_wait::waited_jobs;
use crate::offer::Offer;

#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error(
        "no tool left to offer: --enable/CAM_ENABLE and --disable/CAM_DISABLE leave none of {0}"
    )]
    NoTools(String),
    #[error("{setting} names {error}")]
    Unknown {
        setting: &'static str,
        error: cli_agent_engine::agent::UnknownAgent,
    },
}

/// The tools this server offers, in a fixed order.
pub struct Catalogue {
    offers: Vec<Offer>,
    /// Built at the first `tools/list`: their schemas are most of a start's own work, and
    /// `initialize` needs none of it.
    tools: OnceLock<Vec<Tool>>,
}

impl Catalogue {
    /// Every offer named in `enable` (all when empty) that is not named in `disable`.
    pub fn new(
        offers: &[Offer],
        enable: &[String],
        disable: &[String],
    ) -> Result<Self, CatalogueError> {
        let agents: Vec<_> = offers.iter().map(|offer| offer.agent).collect();
        for (setting, names) in [
            ("--enable/CAM_ENABLE", enable),
            ("--disable/CAM_DISABLE", disable),
        ] {
            for name in names {
                cli_agent_engine::agent::find(&agents, name)
                    .map_err(|error| CatalogueError::Unknown { setting, error })?;
            }
        }
        let chosen = |name: &str| {
            (enable.is_empty() || enable.iter().any(|e| e == name))
                && !disable.iter().any(|d| d == name)
        };
        let offers: Vec<_> = offers
            .iter()
            .filter(|offer| chosen(offer.agent.name()))
            .cloned()
            .collect();
        if offers.is_empty() {
            return Err(CatalogueError::NoTools(cli_agent_engine::agent::names(
                &agents,
            )));
        }
        Ok(Self {
            offers,
            tools: OnceLock::new(),
        })
    }

    pub fn tools(&self) -> Vec<Tool> {
        self.tools.get_or_init(|| tools(&self.offers)).clone()
    }

    /// The agent of the tool named `name` (a tool is named after its agent).
    pub fn agent(&self, name: &str) -> Option<Agent> {
        self.offers
            .iter()
            .map(|offer| offer.agent)
            .find(|agent| agent.name() == name)
    }

    pub fn names(&self) -> String {
        self.agent_names().collect::<Vec<_>>().join(", ")
    }

    /// The agents offered, by their tools' names.
    pub fn agent_names(&self) -> impl Iterator<Item = &str> {
        self.offers.iter().map(|offer| offer.agent.name())
    }
}

/// The `inputSchema` of a tool whose arguments are `T`, in formats clients accept.
fn arguments_schema<T: JsonSchema + 'static>() -> JsonObject {
    // The schema is derived from a fixed type: failing here is a bug caught by any test.
    let mut schema = schema_for_input::<T>()
        .expect("argument types are structs, so their schemas are objects")
        .as_ref()
        .clone();
    drop_numeric_formats(&mut schema);
    schema
}

/// schemars writes Rust's number types as formats (`uint64`, `int32`, `double`) that JSON
/// Schema does not define; strict validators in clients (Claude Code's) warn about each one.
/// The ranges stay in `minimum`.
fn drop_numeric_formats(schema: &mut JsonObject) {
    let numeric = |format: &Value| {
        format.as_str().is_some_and(|f| {
            f.starts_with("int") || f.starts_with("uint") || f == "double" || f == "float"
        })
    };
    if schema.get("format").is_some_and(numeric) {
        schema.remove("format");
    }
    for value in schema.values_mut() {
        match value {
            Value::Object(inner) => drop_numeric_formats(inner),
            Value::Array(items) => items
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(drop_numeric_formats),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use cli_agent_engine::clis;

    use super::*;

    #[test]
    fn enable_and_disable_choose_the_tools_in_a_fixed_order() {
        let offers: Vec<Offer> = clis::builtin_agents().map(Offer::from).collect();
        let names = |list: &[&str]| list.iter().map(|name| name.to_string()).collect::<Vec<_>>();
        let all = Catalogue::new(&offers, &[], &[]).expect("tools");
        // The registry's order.
        assert_eq!(all.names(), clis::builtin_names());
        let some = Catalogue::new(&offers, &names(&["gemini", "codex"]), &names(&["gemini"]))
            .expect("tools");
        assert_eq!(some.names(), "codex");
        assert_eq!(some.agent("gemini"), None);
        assert!(Catalogue::new(&offers, &names(&["codex"]), &names(&["codex"])).is_err());
        let unknown = Catalogue::new(&offers, &names(&["cursor"]), &[])
            .err()
            .expect("unknown");
        assert!(
            unknown.to_string().contains("unknown agent `cursor`"),
            "{unknown}"
        );
    }
}
