//! cli-agent-mcp: run coding-agent CLIs headless, from the command line or as an MCP server.
//!
//! `main` parses the command line (with the config file under it), dispatches to one of
//! `commands` and exits with its code. The arrows run one way: `commands` compose `mcp`,
//! `transport`, `jobs`, `dashboard` and `config` from the values of `cli`; the transports carry
//! `mcp`, which calls `jobs` and the engine. `scripts/import-cycles` checks there is no circle.
// stdout is the MCP channel of the stdio server: only the commands that print on purpose may
// (the tests' figures print too).
#![cfg_attr(not(test), deny(clippy::print_stdout))]

mod bearer;
mod budget;
mod cli;
mod commands;
mod config;
mod dashboard;
mod first_answer;
mod jobs;
mod logging;
mod mcp;
#[cfg(test)]
mod registry_tests;
mod transport;

use std::process::ExitCode;
use std::sync::Arc;

use cli_agent_engine::process::{
    GUARDIAN_SUBCOMMAND, Guardian, GuardianStart, MarkerPrefix, run_guardian,
};
use cli_agent_engine::sandbox::remove_left_by;

use crate::cli::Command;
use crate::first_answer::AfterFirstAnswer;
use crate::transport::parent_pipe::{self, ParentPipe};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_some_and(|arg| arg == GUARDIAN_SUBCOMMAND) {
        return guard(args.next());
    }
    // SAFETY: first in main, once: no other thread exists yet.
    let parent_pipe = unsafe { parent_pipe::take() };
    cli_agent_engine::platform::tune_allocator();
    let runtime_start = runtime_beside();
    let mut loaded = match config::load() {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let command = match loaded.cli.command.take() {
        Some(command) => command,
        None => Command::Serve(loaded.cli.options.serve.clone()),
    };
    let after_first_answer = first_answer_gate(&command);
    if let Err(error) = logging::init(&loaded.cli.options.logging, command.default_log_level()) {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
    let parent_pipe = parent_pipe.unwrap_or_else(|error| {
        tracing::warn!(%error);
        None
    });
    // Held until we return; our death, however it comes, closes its pipe.
    let _guardian = start_guardian(&command, &after_first_answer);
    // Dropped first: what waits on a gate never opened (the guardian's start among it) is
    // dropped, not run.
    let _open_at_exit = after_first_answer.opened_at_exit();
    let runtime = match runtime_start() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: could not start the async runtime: {error}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(dispatch(command, loaded, parent_pipe, after_first_answer));
    // A blocking read of stdin cannot be cancelled: waiting for it would hang the exit.
    runtime.shutdown_background();
    ExitCode::from(code)
}

/// The async runtime, built on a thread of its own while `main` reads its settings: the spawns
/// of its worker threads, about a millisecond on a machine of two cores, go on beside that.
fn runtime_beside() -> impl FnOnce() -> std::io::Result<tokio::runtime::Runtime> {
    let build = || {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    };
    let thread = std::thread::Builder::new()
        .name("runtime-start".into())
        .spawn(build);
    move || match thread {
        Ok(thread) => thread
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("its thread panicked"))),
        Err(_) => build(),
    }
}

/// Only the server answers a client first; the other commands start everything at once.
fn first_answer_gate(command: &Command) -> AfterFirstAnswer {
    match command {
        Command::Serve(_) => AfterFirstAnswer::default(),
        _ => AfterFirstAnswer::open_now(),
    }
}

/// The guardian of the commands that start runs, which wait for it: started on a thread of
/// its own once the server has answered its client (at once for `run`), so that neither the
/// thread nor the guardian's exec takes turns with the way to that answer.
fn start_guardian(
    command: &Command,
    after_first_answer: &AfterFirstAnswer,
) -> Option<Arc<GuardianStart>> {
    let starts_runs = matches!(command, Command::Serve(_) | Command::Run(_));
    starts_runs.then(|| {
        let guardian = Guardian::start_later();
        let start = guardian.clone();
        after_first_answer.then(move || start.begin());
        guardian
    })
}

/// Run the command with the settings it takes; its exit code. Only the server watches the
/// launcher's pipe; the other commands close it.
async fn dispatch(
    command: Command,
    loaded: config::Loaded,
    parent: Option<ParentPipe>,
    after_first_answer: AfterFirstAnswer,
) -> u8 {
    let store = loaded.store_settings();
    let config = loaded.engine_config();
    let agents = loaded.agents();
    match command {
        Command::Serve(args) => {
            let started = commands::serve::Start {
                offers: loaded.offers(),
                store,
                parent,
                after_first_answer,
            };
            commands::serve::run(args, config, started).await
        }
        Command::Run(args) => commands::run::run(args, config, &agents, &store).await,
        Command::Doctor(args) => commands::doctor::run(config, &agents, args.json).await,
        Command::Jobs(args) => commands::jobs::run(args, &store),
        Command::Dashboard(args) => commands::dashboard::run(args.port, store).await,
        Command::Config(args) => commands::config::run(&loaded, args.json),
    }
}

/// The hidden `__guardian <marker prefix>` command: no runtime, no logging, no clap.
fn guard(prefix: Option<std::ffi::OsString>) -> ExitCode {
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
