//! Logs go to stderr (stdout belongs to the answer or the MCP channel), optionally to a file.

use std::fs::OpenOptions;
use std::io::IsTerminal;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::MakeWriterExt;

use crate::args::LoggingArgs;

pub fn init(args: &LoggingArgs, default_level: &str) -> Result<(), String> {
    let filter = args.log.as_deref().unwrap_or(default_level);
    let filter = EnvFilter::try_new(filter).map_err(|error| {
        format!("bad log filter `{filter}` (--log / CAM_LOG): {error}; try `info` or `debug`")
    })?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    match &args.log_file {
        Some(path) => {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|error| {
                    format!(
                        "cannot open log file {} (--log-file / CAM_LOG_FILE): {error}",
                        path.display()
                    )
                })?;
            builder
                .with_ansi(false)
                .with_writer(std::io::stderr.and(Mutex::new(file)))
                .init();
        }
        // MCP clients keep a server's stderr in log files: colour only on a terminal.
        None => builder
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .init(),
    }
    Ok(())
}
