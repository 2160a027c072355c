//! cli-agent-mcp: run coding-agent CLIs headless, from the command line or as an MCP server.

mod args;
mod doctor;
mod logging;
mod run_command;
mod server;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Serve(cli.serve));
    if let Err(error) = logging::init(&cli.logging, command.default_log_level()) {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
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
    let config = cli.engine.config();
    let code = runtime.block_on(async move {
        match command {
            Command::Serve(args) => server::serve(args, config).await,
            Command::Run(args) => run_command::run(args, config).await,
            Command::Doctor(args) => doctor::run(config, args.json).await,
        }
    });
    // A blocking read of stdin cannot be cancelled: waiting for it would hang the exit.
    runtime.shutdown_background();
    ExitCode::from(code)
}
