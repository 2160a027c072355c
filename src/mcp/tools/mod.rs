//! The tools the server offers: the agent tools (`agent`, one per CLI or custom agent, chosen
//! into a [`Catalogue`], offered while `installed` finds the CLI) and the job tools (`job` and
//! one file per tool: `job_wait`, `job_result`, `job_cancel`, `job_list`, `job_diff`,
//! `job_apply`, `job_discard`, `job_revert`). A new tool is a file here, named in [`job`] or
//! the catalogue. Called by the handler; calls `jobs`, `policy` and `result`.

mod agent;
mod installed;
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

use std::sync::{Arc, OnceLock};

use cli_agent_engine::{Agent, EngineConfig};
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde_json::Value;
use tokio::sync::watch;

#[cfg(test)]
pub use self::agent::ToolArgs;
use self::agent::tools;
pub use self::agent::{CallRequest, call_request, call_request_to_ask};
pub use self::installed::{LOOK_EVERY, Offered, announce_changes};
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

/// The tools this server may offer, in a fixed order, and which of them it offers now.
pub struct Catalogue {
    /// The agents `--enable`/`--disable` leave: a call may name any of them (one whose CLI is
    /// missing fails with how to install it).
    offers: Arc<[Offer]>,
    /// Built at the first `tools/list`: their schemas are most of a start's own work, and
    /// `initialize` needs none of it.
    tools: OnceLock<Vec<Tool>>,
    /// Which offers are listed: all until [`Catalogue::offer_installed`] looks.
    offered: watch::Sender<Offered>,
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
        let offered = watch::Sender::new(offers.iter().map(|_| true).collect());
        Ok(Self {
            offers: offers.into(),
            tools: OnceLock::new(),
            offered,
        })
    }

    /// Offer only the agents whose CLI is here (see `installed`), and keep looking for the
    /// others while the runtime runs.
    pub fn offer_installed(&self, config: &EngineConfig) {
        let quick = EngineConfig {
            login_shell: false,
            ..config.clone()
        };
        self.offered
            .send_replace(installed::look(&self.offers, &quick));
        installed::keep_looking(self.offers.clone(), config.clone(), self.offered.clone());
    }

    /// The agent tools on offer now.
    pub fn tools(&self) -> Vec<Tool> {
        let all = self.tools.get_or_init(|| tools(&self.offers));
        self.pick(all, true).into_iter().cloned().collect()
    }

    /// Tell every session the tools changed: the conformance fixture that changes the list
    /// has no CLI to install.
    #[cfg(feature = "conformance-fixtures")]
    pub fn announce_change(&self) {
        self.offered.send_modify(|_| ());
    }

    /// Each change of the tools on offer, from now on.
    pub fn changes(&self) -> watch::Receiver<Offered> {
        self.offered.subscribe()
    }

    /// The agents `--enable`/`--disable` leave whose CLI is not here, so not offered.
    pub fn missing(&self) -> Vec<Agent> {
        let offers = self.pick(&self.offers, false);
        offers.into_iter().map(|offer| offer.agent).collect()
    }

    /// Of `items`, one for each offer in order, those of the offers listed now (`listed`) or
    /// of the others.
    fn pick<'a, T>(&self, items: &'a [T], listed: bool) -> Vec<&'a T> {
        let offered = self.offered.borrow().clone();
        items
            .iter()
            .zip(offered.iter())
            .filter(|(_, offered)| **offered == listed)
            .map(|(item, _)| item)
            .collect()
    }

    /// The agent of the tool named `name` (a tool is named after its agent).
    pub fn agent(&self, name: &str) -> Option<Agent> {
        self.offers
            .iter()
            .map(|offer| offer.agent)
            .find(|agent| agent.name() == name)
    }

    pub fn names(&self) -> String {
        self.agent_names().join(", ")
    }

    /// The agents offered now, by their tools' names.
    pub fn agent_names(&self) -> Vec<&str> {
        let offers = self.pick(&self.offers, true);
        offers.into_iter().map(|offer| offer.agent.name()).collect()
    }
}

/// The `inputSchema` of a tool whose arguments are `T`, in formats clients accept. Without
/// `$schema` (MCP reads a schema without one as 2020-12, the dialect schemars writes) and the
/// Rust type's name as `title`: every tool list carries each input schema, and the host's
/// model reads them all.
fn arguments_schema<T: JsonSchema + 'static>() -> JsonObject {
    // The schema is derived from a fixed type: failing here is a bug caught by any test.
    let mut schema = schema_for_input::<T>()
        .expect("argument types are structs, so their schemas are objects")
        .as_ref()
        .clone();
    schema.remove("$schema");
    schema.remove("title");
    drop_numeric_formats(&mut schema);
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties
            .values_mut()
            .filter_map(Value::as_object_mut)
            .for_each(optional_as_omitted);
    }
    schema
}

/// An optional argument's schema as "leave it out", not "or null": `["string", "null"]` becomes
/// `"string"`; `"default": null`, a flag's `"default": false` and an object's
/// `"additionalProperties": true` go (each what its absence means). The arguments still take a
/// null as absent; the schema just does not spend the host model's context saying so in every
/// field of every tool.
fn optional_as_omitted(property: &mut JsonObject) {
    if let Some(Value::Array(types)) = property.get("type") {
        let kept: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if let [only] = kept[..] {
            let only = only.clone();
            property.insert("type".to_owned(), only);
        }
    }
    if property
        .get("default")
        .is_some_and(|default| default.is_null() || *default == Value::Bool(false))
    {
        property.remove("default");
    }
    if property.get("additionalProperties") == Some(&Value::Bool(true)) {
        property.remove("additionalProperties");
    }
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
