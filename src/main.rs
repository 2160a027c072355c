//! The `cli-agent-mcp` binary: the command line parsed over the config file, logging set up,
//! the guardian started, and the command run by the library on an async runtime.

use std::process::ExitCode;

use cli_agent_mcp as app;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    if args
        .next()
        .is_some_and(|arg| arg == app::GUARDIAN_SUBCOMMAND)
    {
        return app::guard(args.next());
    }
    // SAFETY: first in main, once: no other thread exists yet.
    let parent_pipe = unsafe { app::parent_pipe::take() };
    cli_agent_engine::platform::tune_allocator();
    let mut loaded = match app::load() {
        Ok(loaded) => loaded,
        Err(error) => return usage(error),
    };
    let command = app::command_of(&mut loaded);
    if let Err(error) = app::init_logging(&loaded.args.options.logging, command.default_log_level())
    {
        return usage(error);
    }
    let parent_pipe = parent_pipe.unwrap_or_else(|error| {
        tracing::warn!(%error);
        None
    });
    let _guardian = app::guardian_for(&command);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return usage(format!("could not start the async runtime: {error}")),
    };
    let code = runtime.block_on(app::run(command, loaded, parent_pipe));
    // A blocking read of stdin cannot be cancelled: waiting for it would hang the exit.
    runtime.shutdown_background();
    ExitCode::from(code)
}

fn usage(error: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {error}");
    ExitCode::from(2)
}
