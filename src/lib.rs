//! cli-agent-mcp: run coding-agent CLIs headless, from the command line or as an MCP server.
//!
//! The binary (`main.rs`) parses the command line (with the config file under it) and hands
//! the command to [`run`]. The arrows run one way: `commands` compose `mcp`, `transport`,
//! `jobs`, `dashboard` and `config` from the values of `cli`; the transports carry `mcp`, which
//! calls `jobs` and the engine. `scripts/import-cycles` checks there is no circle.
// stdout is the MCP channel of the stdio server: only the commands that print on purpose may
// (the tests' figures print too).
#![cfg_attr(not(test), deny(clippy::print_stdout))]

mod args;
mod budget;
mod changes_report;
mod commands;
mod config;
mod dashboard;
mod jobs;
mod logging;
mod mcp;
mod models;
mod offer;
mod probe;
#[cfg(test)]
mod registry_tests;
mod stop_signals;
mod transport;
mod web;

use std::ffi::OsString;
use std::process::ExitCode;

use cli_agent_engine::process::{Guardian, MarkerPrefix, run_guardian};
use cli_agent_engine::sandbox::remove_left_by;

pub use crate::args::Command;
pub use crate::config::{ConfigError, Loaded, load};
pub use crate::logging::init as init_logging;
pub use crate::transport::parent_pipe::{self, ParentPipe};
pub use cli_agent_engine::process::GUARDIAN_SUBCOMMAND;

/// The command `loaded` names: `serve` when it names none, as the bare binary serves.
pub fn command_of(loaded: &mut Loaded) -> Command {
    match loaded.args.command.take() {
        Some(command) => command,
        None => Command::Serve(loaded.args.options.serve.clone()),
    }
}

/// The guardian of the commands that start runs, started before anything else: held until
/// the process ends, whose death, however it comes, closes its pipe. A failure is logged and
/// the runs go on unguarded, as they would have.
pub fn guardian_for(command: &Command) -> Option<Guardian> {
    matches!(command, Command::Serve(_) | Command::Run(_))
        .then(|| {
            Guardian::start()
                .inspect_err(|error| tracing::warn!(%error))
                .ok()
        })
        .flatten()
}

/// Run `command` with the settings `loaded` holds; its exit code. Only the server watches the
/// launcher's pipe; the other commands close it.
pub async fn run(command: Command, loaded: Loaded, parent: Option<ParentPipe>) -> u8 {
    let store = loaded.store_settings();
    let config = loaded.engine_config();
    let agents = loaded.agents();
    match command {
        Command::Serve(args) => {
            let started = commands::serve::Start {
                offers: loaded.offers(),
                store,
                parent,
            };
            commands::serve::run(args, config, started).await
        }
        Command::Run(args) => commands::run::run(args, config, &agents, &store).await,
        Command::Doctor(args) => {
            commands::doctor::run(config, &agents, args.json, args.models).await
        }
        Command::Jobs(args) => commands::jobs::run(args, &store),
        Command::Dashboard(args) => commands::dashboard::run(args.port, store).await,
        Command::Config(args) => commands::config::run(&loaded, args.json),
    }
}

/// The hidden `__guardian <marker prefix>` command: no runtime, no logging, no clap.
pub fn guard(prefix: Option<OsString>) -> ExitCode {
    let prefix = prefix.unwrap_or_default();
    let prefix: MarkerPrefix = match prefix.to_string_lossy().parse() {
        Ok(prefix) => prefix,
        Err(error) => {
            eprintln!("cli-agent-mcp guardian: {error}");
            return ExitCode::from(2);
        }
    };
    let killed = run_guardian(&prefix);
    // A killed server removed nothing of its runs' temporary files itself.
    remove_left_by(prefix.instance());
    if killed > 0 {
        eprintln!(
            "cli-agent-mcp guardian: the server is gone; killed {killed} processes of its runs"
        );
    }
    ExitCode::SUCCESS
}
