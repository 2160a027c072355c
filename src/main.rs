//! cli-agent-mcp: run coding-agent CLIs headless, from the command line or as an MCP server.

mod args;
mod budget;
mod config;
mod dashboard;
mod doctor;
mod http;
mod jobs;
mod jobs_command;
mod logging;
#[cfg(test)]
mod registry_tests;
mod run_command;
mod server;

use std::process::ExitCode;

use cli_agent_engine::process::{GUARDIAN_COMMAND, Guardian, run_guardian};

use crate::args::Command;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_some_and(|arg| arg == GUARDIAN_COMMAND) {
        return guard(args.next());
    }
    return_large_blocks_when_freed();
    let mut loaded = match config::load() {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let store = loaded.store_settings();
    let config = loaded.engine_config();
    let agents = loaded.agents();
    let offers = loaded.offers();
    let command = match loaded.cli.command.take() {
        Some(command) => command,
        None => Command::Serve(loaded.cli.serve.clone()),
    };
    let cli = &loaded.cli;
    if let Err(error) = logging::init(&cli.logging, command.default_log_level()) {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
    // Held until we return; our death, however it comes, closes its pipe.
    let starts_runs = matches!(command, Command::Serve(_) | Command::Run(_));
    let _guardian = starts_runs.then(start_guardian).flatten();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: could not start the async runtime: {error}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(async move {
        match command {
            Command::Serve(args) => server::serve(args, config, offers, store).await,
            Command::Run(args) => run_command::run(args, config, &agents, &store).await,
            Command::Doctor(args) => doctor::run(config, &agents, args.json).await,
            Command::Jobs(args) => jobs_command::run(args, &store),
            Command::Dashboard(args) => dashboard::run(args, store).await,
            Command::Config(args) => config::command::run(&loaded, args.json),
        }
    });
    // A blocking read of stdin cannot be cancelled: waiting for it would hang the exit.
    runtime.shutdown_background();
    ExitCode::from(code)
}

/// Blocks of 128 KiB and more (a long run's transcript, its result) are mapped on their own
/// and given back when freed. glibc would otherwise raise that threshold after the first such
/// block is freed and carve the next ones from its heaps, which then keep them: the server's
/// peak RSS grew from 16 to 21-24 MiB over ten runs of the stream bench; it stays at 14.
fn return_large_blocks_when_freed() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes a setting of the allocator; no other thread exists yet.
    unsafe {
        nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Before the first run: the guardian that kills our runs' processes if we are killed.
fn start_guardian() -> Option<Guardian> {
    Guardian::start()
        .inspect_err(|error| tracing::warn!(%error))
        .ok()
}

/// The hidden `__guardian <marker prefix>` command: no runtime, no logging, no clap.
fn guard(prefix: Option<std::ffi::OsString>) -> ExitCode {
    let prefix = prefix.unwrap_or_default();
    match run_guardian(&prefix.to_string_lossy()) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(killed) => {
            eprintln!(
                "cli-agent-mcp guardian: the server is gone; killed {killed} processes of its runs"
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("cli-agent-mcp guardian: {error}");
            ExitCode::from(2)
        }
    }
}
