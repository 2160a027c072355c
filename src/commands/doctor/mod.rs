//! `cli-agent-mcp doctor`: which CLIs this server can run, in which versions, and what to do
//! about the ones it cannot; and what the kernel sandbox enforces here.

mod sandbox;

use std::cmp::Ordering;
use std::path::PathBuf;

use cli_agent_engine::clis::Cli;
use cli_agent_engine::sandbox::KernelSupport;
use cli_agent_engine::{Agent, EngineConfig, FoundCli, SetupError, find_cli};
use serde::Serialize;
use tokio::task::JoinSet;

use crate::models::{self, ModelsReport};
use crate::probe::{command_for, probe};

/// What doctor found out about one CLI.
#[derive(Debug, Serialize)]
pub struct CliReport {
    pub agent: Agent,
    /// The CLI it runs: the agent's own name, or a custom agent's base.
    pub cli: &'static str,
    pub state: State,
    pub path: Option<PathBuf>,
    /// Where it was found: `PATH`, `configured`, `login shell PATH`, `nvm node v22.11.0`,
    /// `~/.local/bin`, …
    pub found_by: Option<String>,
    /// "found in ~/.local/bin, not on PATH", for one found off PATH.
    pub found: Option<String>,
    /// How it starts when not as found: on Windows, the program an npm `.cmd` shim names, or
    /// a batch file that runs through cmd.exe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts: Option<String>,
    /// The CLI found, to list its models the way it runs.
    #[serde(skip)]
    found_cli: Option<FoundCli>,
    /// Where a missing one was looked for besides PATH.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub looked: Vec<String>,
    pub version: Option<String>,
    pub verified_version: &'static str,
    /// How its version stands against the verified one, when both read as releases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<Release>,
    /// What to do, when there is something to do.
    pub advice: Option<String>,
    /// The models it offers (`--models` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<ModelsReport>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Found, and the version is one the project verified.
    Verified,
    /// Found and runs, but in a version the project has not verified.
    Unverified,
    /// Not found where the server looks for it.
    Missing,
    /// Found, but `--version` failed.
    Broken,
}

/// How a found CLI's version stands against the verified one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Release {
    Verified,
    /// Newer than the verified one: unverified, and never to be replaced by it.
    Newer,
    /// Older than the verified one: worth upgrading.
    Older,
}

/// Where problems with a CLI release are reported.
const ISSUES: &str = "https://github.com/cli-agent-mcp/cli-agent-mcp/issues";

impl State {
    fn usable(self) -> bool {
        matches!(self, Self::Verified | Self::Unverified)
    }

    fn label(self) -> &'static str {
        match self {
            Self::Verified => "ok",
            Self::Unverified => "warning",
            Self::Missing => "missing",
            Self::Broken => "broken",
        }
    }
}

impl CliReport {
    /// The text report's word for its state: an unverified release says whether it is newer
    /// or older than the verified one.
    fn label(&self) -> &'static str {
        match (self.state, self.release) {
            (State::Unverified, Some(Release::Newer)) => "newer",
            (State::Unverified, Some(Release::Older)) => "older",
            (state, _) => state.label(),
        }
    }
}

/// Doctor's whole report: each CLI, and the sandbox.
#[derive(Debug, Serialize)]
struct Report {
    clis: Vec<CliReport>,
    sandbox: sandbox::SandboxReport,
}

/// Check every agent's CLI, print the report, and exit 0 when at least one is usable.
#[allow(clippy::print_stdout)] // the report is this command's output
pub async fn run(config: EngineConfig, agents: &[Agent], json: bool, list_models: bool) -> u8 {
    let mut reports = check_all(&config, agents).await;
    if list_models {
        add_models(&config, &mut reports).await;
    }
    let sandbox = sandbox::SandboxReport::new(config.sandbox, KernelSupport::current());
    if json {
        let report = Report {
            clis: reports,
            sandbox,
        };
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(error) => eprintln!("error: could not encode the report: {error}"),
        }
        return exit_code(&report.clis);
    }
    print!("{}\n{}", render(&reports), sandbox.render());
    exit_code(&reports)
}

/// 0 when at least one CLI is usable.
fn exit_code(reports: &[CliReport]) -> u8 {
    if reports.iter().any(|report| report.state.usable()) {
        0
    } else {
        1
    }
}

pub(crate) async fn check_all(config: &EngineConfig, agents: &[Agent]) -> Vec<CliReport> {
    let mut checks = JoinSet::new();
    for &agent in agents {
        let found = find_cli(agent, config);
        checks.spawn(async move { check(agent, found).await });
    }
    let mut reports = checks.join_all().await;
    reports.sort_by_key(|report| agents.iter().position(|a| *a == report.agent));
    reports
}

/// The models of every usable CLI, listed at once.
async fn add_models(config: &EngineConfig, reports: &mut [CliReport]) {
    let mut listings = JoinSet::new();
    for (at, report) in reports.iter().enumerate() {
        if let (true, Some(found)) = (report.state.usable(), report.found_cli.clone()) {
            let (agent, config) = (report.agent, config.clone());
            listings.spawn(async move { (at, models::list(agent, &config, &found).await) });
        }
    }
    for (at, listed) in listings.join_all().await {
        reports[at].models = Some(listed);
    }
}

async fn check(agent: Agent, found: Result<FoundCli, SetupError>) -> CliReport {
    let cli = agent.cli();
    let verified_version = cli.verified_version();
    let mut report = CliReport {
        agent,
        cli: cli.name(),
        state: State::Missing,
        path: None,
        found_by: None,
        found: None,
        starts: None,
        found_cli: None,
        looked: Vec::new(),
        version: None,
        verified_version,
        release: None,
        advice: None,
        models: None,
    };
    let found = match found {
        Ok(found) => found,
        Err(error) => {
            if let SetupError::CliNotFound { looked, .. } = &error {
                report.looked.clone_from(&looked.places);
            }
            report.advice = Some(missing_advice(agent, &error));
            return report;
        }
    };
    report.path = Some(found.path.clone());
    report.found_by = Some(found.source.to_string());
    report.found = found.describe();
    report.starts = found.start.note();
    rate_version(&mut report, agent, &found).await;
    report.found_cli = Some(found);
    report
}

/// The found CLI's state by its `--version`: verified, another release, or broken.
async fn rate_version(report: &mut CliReport, agent: Agent, found: &FoundCli) {
    let cli = agent.cli();
    let path = &found.path;
    match version_of(cli, found).await {
        Ok(version) => {
            report.release = release(&version, cli.verified_version());
            report.state = match report.release {
                Some(Release::Verified) => State::Verified,
                _ => State::Unverified,
            };
            report.advice = report
                .release
                .map_or_else(|| Some(unordered_advice(cli, &version)), |r| r.advice(cli));
            report.version = Some(version);
        }
        Err(problem) => {
            report.state = State::Broken;
            // Its release is unknown: reinstalling the verified one could be a downgrade.
            report.advice = Some(format!(
                "`{} --version` {problem}: reinstall it with `npm install -g {package}` (the \
                 verified release: `{package}@{}`) or point {} at a working binary",
                path.display(),
                cli.verified_version(),
                agent.bin_setting(),
                package = cli.npm_package(),
            ));
        }
    }
}

/// How `version` stands against the verified one; `None` when the two cannot be ordered.
fn release(version: &str, verified: &str) -> Option<Release> {
    match cli_agent_engine::version::compare(version, verified)? {
        Ordering::Equal => Some(Release::Verified),
        Ordering::Greater => Some(Release::Newer),
        Ordering::Less => Some(Release::Older),
    }
}

impl Release {
    /// What to do about a release of `cli`: nothing for the verified one; a newer one is kept
    /// (it is what its user runs every day) and watched; an older one is upgraded.
    fn advice(self, cli: &dyn Cli) -> Option<String> {
        let verified = cli.verified_version();
        match self {
            Self::Verified => None,
            Self::Newer => Some(format!(
                "newer than the verified {verified}, unverified: a newer release may have \
                 changed its JSONL stream or its flags (events cli-agent-mcp does not know are \
                 skipped and counted in a run's `warnings`; a changed flag fails runs). Keep \
                 it; if runs misbehave, report it with this output at {ISSUES}"
            )),
            Self::Older => Some(format!(
                "older than the verified {verified}: it may lack flags or events cli-agent-mcp \
                 relies on. Upgrade with `npm install -g {}@{verified}`",
                cli.npm_package()
            )),
        }
    }
}

/// A version that cannot be ordered against the verified one: what that risks, no install.
fn unordered_advice(cli: &dyn Cli, version: &str) -> String {
    format!(
        "cli-agent-mcp is verified with {} {}; {version} may print events it does not know \
         (they are skipped and counted in a run's `warnings`)",
        cli.name(),
        cli.verified_version()
    )
}

fn missing_advice(agent: Agent, error: &SetupError) -> String {
    let install = format!(
        "`npm install -g {}@{}`",
        agent.cli().npm_package(),
        agent.cli().verified_version()
    );
    match error {
        // The engine's message quotes the whole PATH and every place looked; a report line
        // needs less: the places are listed once, under the CLIs (and in `looked`).
        SetupError::CliNotFound {
            binary, setting, ..
        } => format!(
            "`{binary}` is neither on PATH nor where installers put it: install it with \
             {install}, or set {setting} to its binary"
        ),
        other => format!("{other}; the verified version installs with {install}"),
    }
}

/// The version `<bin> --version` prints.
async fn version_of(cli: &dyn Cli, found: &FoundCli) -> Result<String, String> {
    let printed = probe(command_for(found, &["--version"])).await?;
    cli.version_from(&printed.stdout)
        .or_else(|| cli.version_from(&printed.stderr))
        .ok_or_else(|| format!("printed no version: {:?}", printed.stdout.trim()))
}

fn render(reports: &[CliReport]) -> String {
    let mut out = String::new();
    for report in reports {
        let version = report.version.as_deref().unwrap_or("-");
        let path = report
            .path
            .as_ref()
            .map_or_else(String::new, |path| path.display().to_string());
        let name = if report.agent.is_builtin() {
            report.agent.name().to_owned()
        } else {
            format!("{} ({})", report.agent.name(), report.cli)
        };
        out.push_str(&format!(
            "{:<9} {:<8} {:<9} {path}\n",
            name,
            report.label(),
            version
        ));
        for said in [&report.found, &report.starts].into_iter().flatten() {
            out.push_str(&format!("          {said}\n"));
        }
        if let Some(advice) = &report.advice {
            out.push_str(&format!("          {advice}\n"));
        }
        if let Some(listed) = &report.models {
            out.push_str(&models::render(listed));
        }
    }
    if let Some(missing) = reports.iter().find(|report| !report.looked.is_empty()) {
        out.push_str(&format!(
            "\nLooked for the missing ones on PATH and in {}.\n",
            missing.looked.join(", ")
        ));
    }
    let usable = reports.iter().filter(|r| r.state.usable()).count();
    out.push_str(&format!("\n{usable} of {} CLIs usable.\n", reports.len()));
    if usable == 0 {
        out.push_str("Install at least one of them; the lines above say how.\n");
    }
    if reports.iter().any(|report| report.state == State::Missing) {
        out.push_str(
            "The server offers a tool for each CLI found or given a path, and for a missing one \
             within seconds of its install.\n",
        );
    }
    out
}
