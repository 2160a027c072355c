//! The models an agent's CLI offers, where it can list them headless, with the agent's
//! configured default marked: `doctor --models` and the `models://{agent}` resource. Listed
//! only when asked (a listing may reach the network), never as the server starts.

use cli_agent_engine::{Agent, EngineConfig, FoundCli, find_cli};
use serde::Serialize;

use crate::probe::probe;

/// What a CLI's listing said, or why there is none.
#[derive(Debug, Serialize)]
pub struct ModelsReport {
    /// The models it offers, as it names them.
    pub models: Vec<String>,
    /// The agent's configured `model`, the one a call that names none gets.
    pub default: Option<String>,
    /// Why there is no list: the CLI cannot list its models, or its listing failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The models `agent`'s CLI offers, wherever it is found; a CLI not found says so.
pub async fn of(agent: Agent, config: &EngineConfig) -> ModelsReport {
    match find_cli(agent, config) {
        Ok(found) => list(agent, config, &found).await,
        Err(error) => ModelsReport {
            models: Vec::new(),
            default: agent.profile().model.clone(),
            note: Some(error.to_string()),
        },
    }
}

/// The models `agent`'s CLI `found` offers, listed in the environment and the way a run
/// starts it.
pub async fn list(agent: Agent, config: &EngineConfig, found: &FoundCli) -> ModelsReport {
    let mut report = ModelsReport {
        models: Vec::new(),
        default: agent.profile().model.clone(),
        note: None,
    };
    let Some((mut command, listing)) = agent.models_command(&found.path, &config.pass_env) else {
        report.note = Some(format!(
            "{} cannot list its models headless: name one with `model` (see its own docs)",
            agent.cli().name()
        ));
        return report;
    };
    let shown = command.args.join(" ");
    found.start_command(&mut command);
    let mut child = tokio::process::Command::new(&command.program);
    child.args(&command.args).env_clear().envs(command.env);
    let listed = probe(child).await.and_then(|printed| {
        (listing.read)(&printed.stdout)
            .or_else(|| (listing.read)(&printed.stderr))
            .ok_or_else(|| "printed no list of models".to_owned())
    });
    match listed {
        Ok(models) => report.models = models,
        Err(problem) => report.note = Some(format!("`{shown}` {problem}")),
    }
    report
}

/// The report's lines: the models, the default marked, or why there are none.
pub fn render(report: &ModelsReport) -> String {
    if let Some(note) = &report.note {
        return format!("          models: {note}\n");
    }
    let is_default = |model: &String| report.default.as_ref() == Some(model);
    let mut names: Vec<String> = report
        .models
        .iter()
        .map(|model| {
            if is_default(model) {
                format!("{model} (default)")
            } else {
                model.clone()
            }
        })
        .collect();
    if let Some(default) = report
        .default
        .as_ref()
        .filter(|d| !report.models.contains(d))
    {
        names.push(format!("{default} (default, not in its list)"));
    }
    format!("          models: {}\n", names.join(", "))
}
