//! `models://{agent}`: the models an agent's CLI offers, as JSON, its configured default
//! marked; listed when read (see [`crate::models`]), never as the server starts or lists its
//! tools.

use cli_agent_engine::EngineConfig;
use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, ResourceContents, ResourceTemplate};
use serde_json::json;

use super::tools::Catalogue;
use crate::models;

const SCHEME: &str = "models://";

/// Its template, beside the jobs'.
pub fn template() -> ResourceTemplate {
    ResourceTemplate::new(format!("{SCHEME}{{agent}}"), "models")
        .with_description(
            "The models an agent's CLI offers, its configured default marked, as JSON (codex \
             and opencode list theirs; the others say they cannot). Listed when read.",
        )
        .with_mime_type("application/json")
}

/// The agent `uri` names, if it is a models URI.
pub fn agent_of(uri: &str) -> Option<&str> {
    uri.strip_prefix(SCHEME)
}

/// The models of the agent `name`, listed now.
pub async fn read(
    catalogue: &Catalogue,
    config: &EngineConfig,
    uri: &str,
    name: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let agent = catalogue.agent(name).ok_or_else(|| {
        let message = format!(
            "`{uri}` names no agent of this server: use models://<agent> with one of {}",
            catalogue.names()
        );
        ErrorData::resource_not_found(message, Some(json!({ "uri": uri })))
    })?;
    let report = models::of(agent, config).await;
    let text = serde_json::to_string_pretty(&report)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    let contents = ResourceContents::text(text, uri).with_mime_type("application/json");
    Ok(ReadResourceResult::new(vec![contents]))
}
