//! cli-agent-mcp: run coding-agent CLIs headless, from the command line or as an MCP server.

mod args;
mod doctor;
mod logging;
mod run_command;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(error) = logging::init(&cli.logging, cli.command.default_log_level()) {
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
        match cli.command {
            Command::Run(args) => run_command::run(args, config).await,
            Command::Doctor(args) => doctor::run(config, args.json).await,
        }
    });
    ExitCode::from(code)
}
