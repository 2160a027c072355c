//! The agents on offer: every built-in CLI with its `[agents.<cli>]` settings, then each
//! custom agent (`[agents.<name>]` with a `base`), checked against each other and the job
//! tools.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use cli_agent_engine::clis::{self, BUILTINS, Cli};
use cli_agent_engine::{Agent, Profile};

use super::file::{AgentSettings, ConfigFile, FileError};

/// One agent on offer, with what its settings add besides its run profile.
#[derive(Clone, Debug)]
pub struct Configured {
    pub agent: Agent,
    /// Shown first in its tool's description.
    pub description: Option<String>,
    /// The cap on its runs at once, from the file (`CAM_<AGENT>_MAX_RUNS` overrides it).
    pub max_runs: Option<usize>,
    /// A custom agent's own binary.
    pub bin: Option<PathBuf>,
}

/// The agents on offer, built-in ones first, in the registry's order.
pub fn build(file: Option<&ConfigFile>, taken: &[&str]) -> Result<Vec<Configured>, FileError> {
    let none = std::collections::BTreeMap::new();
    let all = file.map_or(&none, |file| &file.settings.agents);
    let mut agents = Vec::new();
    for cli in BUILTINS {
        let settings = all.get(cli.name());
        if let (Some(settings), Some(file)) = (settings, file)
            && settings.base.is_some()
        {
            return Err(file.error(
                &["agents", cli.name(), "base"],
                format!(
                    "[agents.{0}] configures the built-in {0}, which has no `base`: give a \
                     custom agent a name of its own",
                    cli.name()
                ),
            ));
        }
        let default = AgentSettings::default();
        if let Some(agent) = configure(cli.name(), *cli, settings.unwrap_or(&default), file)? {
            agents.push(agent);
        }
    }
    let Some(file) = file else {
        return Ok(agents);
    };
    for (name, settings) in all.iter().filter(|(name, _)| clis::builtin(name).is_none()) {
        let cli = custom_base(name, settings, taken, file)?;
        if let Some(agent) = configure(name, cli, settings, Some(file))? {
            agents.push(agent);
        }
    }
    check_distinct_variables(&agents, file)?;
    Ok(agents)
}

/// The base CLI of custom agent `name`, once its name is known to be usable.
fn custom_base(
    name: &str,
    settings: &AgentSettings,
    taken: &[&str],
    file: &ConfigFile,
) -> Result<&'static dyn Cli, FileError> {
    let at = ["agents", name];
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !valid {
        return Err(file.error(
            &at,
            format!(
                "agent name `{name}`: use lowercase letters, digits, `-` and `_`, starting with \
                 a letter (it becomes a tool name and part of CAM_<NAME>_* variables)"
            ),
        ));
    }
    if taken.contains(&name) {
        return Err(file.error(
            &at,
            format!("agent name `{name}` is already a tool of this server: pick another name"),
        ));
    }
    let Some(base) = &settings.base else {
        return Err(file.error(
            &at,
            format!(
                "[agents.{name}] is not a built-in agent ({}), so it needs `base = \"<one of \
                 them>\"`: the CLI it runs",
                clis::builtin_names()
            ),
        ));
    };
    clis::builtin(base).ok_or_else(|| {
        file.error(
            &["agents", name, "base"],
            format!(
                "unknown base `{base}` for agent {name}: expected one of {}",
                clis::builtin_names()
            ),
        )
    })
}

/// The agent `name` runs `cli` with `settings`; `None` when it is disabled.
fn configure(
    name: &str,
    cli: &'static dyn Cli,
    settings: &AgentSettings,
    file: Option<&ConfigFile>,
) -> Result<Option<Configured>, FileError> {
    if settings.enabled == Some(false) {
        return Ok(None);
    }
    if let Some(file) = file {
        check_settings(name, cli, settings, file)?;
    }
    let profile = Profile {
        args: settings.args.clone(),
        env: settings.env.clone().into_iter().collect(),
        model: settings.model.clone(),
        effort: settings.effort,
        timeout: settings.timeout_secs.map(Duration::from_secs),
        idle_timeout: settings.idle_timeout_secs.map(Duration::from_secs),
        isolation: settings.isolation,
        writable: settings.writable.clone(),
    };
    let builtin = clis::builtin(name).is_some();
    Ok(Some(Configured {
        agent: Agent::new(name, cli, profile),
        description: settings.description.clone(),
        max_runs: settings
            .max_runs
            .map(|cap| usize::try_from(cap).unwrap_or(usize::MAX)),
        bin: (!builtin).then(|| settings.bin.clone()).flatten(),
    }))
}

/// Refuses settings of agent `name` in the config `file` that cannot work, naming the key.
fn check_settings(
    name: &str,
    cli: &'static dyn Cli,
    settings: &AgentSettings,
    file: &ConfigFile,
) -> Result<(), FileError> {
    clis::check_extra_args(cli, &settings.args)
        .map_err(|error| file.error(&["agents", name, "args"], format!("{name}: {error}")))?;
    if let Some(bad) = settings.env.keys().find(|var| !valid_variable(var)) {
        return Err(file.error(
            &["agents", name, "env"],
            format!("{name}: `{bad}` is not a variable name: use letters, digits and `_`"),
        ));
    }
    if let Some(relative) = settings.writable.iter().find(|dir| dir.is_relative()) {
        return Err(file.error(
            &["agents", name, "writable"],
            format!(
                "{name}: writable directory `{}` is relative: give an absolute path",
                relative.display()
            ),
        ));
    }
    if let Some(effort) = settings.effort
        && let Err(reason) = cli.effort_option(effort)
    {
        let message = format!("{name}: {} cannot take `effort`: {reason}", cli.name());
        return Err(file.error(&["agents", name, "effort"], message));
    }
    if settings.max_runs == Some(0) {
        return Err(file.error(
            &["agents", name, "max_runs"],
            format!("{name}: max_runs must be 1 or more: leave it out for no cap of its own"),
        ));
    }
    Ok(())
}

fn valid_variable(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `my-agent` and `my_agent` would share `CAM_MY_AGENT_MAX_RUNS`.
fn check_distinct_variables(agents: &[Configured], file: &ConfigFile) -> Result<(), FileError> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for configured in agents {
        let name = configured.agent.name();
        let var = configured.agent.env_var("MAX_RUNS");
        if let Some(other) = seen.insert(var.clone(), name) {
            return Err(file.error(
                &["agents", name],
                format!("agents {other} and {name} would share {var}: rename one of them"),
            ));
        }
    }
    Ok(())
}
