//! The report `cli-agent-mcp config` prints: the effective settings and agents, and where each
//! came from (`commands::config` prints it).

use cli_agent_engine::Effort;
use serde::Serialize;

use super::Loaded;
use super::file::{ConfigFile, Location};
use super::layer::{self, Source};

#[derive(Debug, Serialize)]
pub struct Report {
    /// The config file read, if any.
    file: Option<String>,
    /// Where the default file would be, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    default_file: Option<String>,
    settings: Vec<Setting>,
    agents: Vec<AgentReport>,
}

#[derive(Debug, Serialize)]
struct Setting {
    name: String,
    value: Option<String>,
    #[serde(flatten)]
    source: Source,
}

#[derive(Debug, Serialize)]
struct AgentReport {
    name: &'static str,
    cli: &'static str,
    custom: bool,
    /// The `[agents.<name>]` table that configures it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    configured_at: Option<String>,
    /// A custom agent's own binary (a built-in's is the `<cli>_bin` setting).
    #[serde(skip_serializing_if = "Option::is_none")]
    bin: Option<String>,
    model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    effort: Option<Effort>,
    args: Vec<String>,
    /// The names of the variables it adds (their values may be secrets).
    env: Vec<String>,
    timeout_secs: Option<u64>,
    idle_timeout_secs: Option<u64>,
    /// Where its runs may also write under the sandbox at `workspace-write`.
    writable: Vec<String>,
    max_runs: Option<usize>,
    /// Where `max_runs` came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_runs_from: Option<Source>,
    description: Option<String>,
}

/// The effective settings and agents, each with where it came from.
pub fn report(loaded: &Loaded) -> Report {
    let (file, default_file) = match (&loaded.file, &loaded.location) {
        (Some(file), _) => (Some(file.path.display().to_string()), None),
        (None, Location::Default(path)) => (None, Some(path.display().to_string())),
        (None, _) => (None, None),
    };
    let mut settings: Vec<Setting> = loaded
        .command
        .get_arguments()
        .filter(|arg| !matches!(arg.get_id().as_str(), "help" | "version"))
        .map(|arg| {
            let id = arg.get_id().as_str();
            let source =
                layer::source_of(&loaded.command, &loaded.matches, id, &loaded.file_defaults)
                    .unwrap_or(Source::Default);
            let value = loaded.matches.get_raw(id).map(|values| {
                let values: Vec<_> = values.map(|v| v.to_string_lossy().into_owned()).collect();
                values.join(",")
            });
            Setting {
                name: id.to_owned(),
                value,
                source,
            }
        })
        .collect();
    settings.extend(loaded.store.iter().map(|setting| {
        Setting {
            name: format!("{} ({})", setting.key, setting.var),
            value: setting
                .value
                .as_ref()
                .map(|value| value.to_string_lossy().into_owned()),
            source: setting.source.clone(),
        }
    }));
    let agents = loaded
        .agents
        .iter()
        .map(|configured| agent_report(configured, loaded.file.as_ref()))
        .collect();
    Report {
        file,
        default_file,
        settings,
        agents,
    }
}

fn agent_report(configured: &super::Configured, file: Option<&ConfigFile>) -> AgentReport {
    let agent = configured.agent;
    let profile = agent.profile();
    let name = agent.name();
    let table = file.filter(|file| file.settings.agents.contains_key(name));
    let var = agent.env_var("MAX_RUNS");
    let from_env = std::env::var(&var)
        .ok()
        .and_then(|value| value.trim().parse().ok());
    let (max_runs, max_runs_from) = match (from_env, configured.max_runs, table) {
        (Some(cap), _, _) => (Some(cap), Some(Source::Env { var })),
        (None, Some(cap), Some(file)) => (
            Some(cap),
            Some(Source::File {
                at: file.place(&["agents", name, "max_runs"]),
            }),
        ),
        _ => (None, None),
    };
    AgentReport {
        name,
        cli: agent.cli().name(),
        custom: !agent.is_builtin(),
        configured_at: table.map(|file| file.place(&["agents", name])),
        bin: configured.bin.as_ref().map(|bin| bin.display().to_string()),
        model: profile.model.clone(),
        effort: profile.effort,
        args: profile.args.clone(),
        env: profile.env.iter().map(|(name, _)| name.clone()).collect(),
        timeout_secs: profile.timeout.map(|t| t.as_secs()),
        idle_timeout_secs: profile.idle_timeout.map(|t| t.as_secs()),
        writable: profile
            .writable
            .iter()
            .map(|dir| dir.display().to_string())
            .collect(),
        max_runs,
        max_runs_from,
        description: configured.description.clone(),
    }
}

pub fn render(report: &Report) -> String {
    let mut out = match (&report.file, &report.default_file) {
        (Some(file), _) => format!("config file: {file}\n\n"),
        (None, Some(default)) => format!("config file: none ({default} does not exist)\n\n"),
        (None, None) => "config file: none\n\n".to_owned(),
    };
    for setting in &report.settings {
        let value = setting.value.as_deref().unwrap_or("-");
        out.push_str(&format!(
            "{:<42} {:<24} {}\n",
            setting.name, value, setting.source
        ));
    }
    out.push_str("\nagents:\n");
    for agent in &report.agents {
        render_agent(&mut out, agent);
    }
    out
}

/// One agent: what it is, where it is configured, then each field it sets.
fn render_agent(out: &mut String, agent: &AgentReport) {
    let kind = if agent.custom {
        format!("custom, runs {}", agent.cli)
    } else {
        "built-in".to_owned()
    };
    let at = agent
        .configured_at
        .as_ref()
        .map_or_else(String::new, |at| format!(", {at}"));
    out.push_str(&format!("  {} ({kind}{at})\n", agent.name));
    let fields = [
        ("bin", agent.bin.clone()),
        ("model", agent.model.clone()),
        ("effort", agent.effort.map(|effort| effort.to_string())),
        (
            "args",
            (!agent.args.is_empty()).then(|| agent.args.join(" ")),
        ),
        ("env", (!agent.env.is_empty()).then(|| agent.env.join(", "))),
        ("timeout_secs", agent.timeout_secs.map(|v| v.to_string())),
        (
            "idle_timeout_secs",
            agent.idle_timeout_secs.map(|v| v.to_string()),
        ),
        (
            "writable",
            (!agent.writable.is_empty()).then(|| agent.writable.join(", ")),
        ),
        (
            "max_runs",
            agent.max_runs.map(|cap| match &agent.max_runs_from {
                Some(from) => format!("{cap} ({from})"),
                None => cap.to_string(),
            }),
        ),
        ("description", agent.description.clone()),
    ];
    for (name, value) in fields {
        if let Some(value) = value {
            out.push_str(&format!("    {name}: {value}\n"));
        }
    }
}
