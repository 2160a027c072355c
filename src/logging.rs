//! Logs go to stderr (stdout belongs to the answer or the MCP channel), optionally to a file.
//! Every line has its API keys and tokens masked on the way out, whatever logged it (rmcp logs
//! whole messages at debug, prompts and arguments included). Warnings and errors also go to
//! the connected MCP clients (see [`crate::mcp::logging`]).

use std::fs::OpenOptions;
use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;

use cli_agent_engine::redact::redact;
use tracing::Metadata;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::writer::MakeWriterExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::args::LoggingArgs;
use crate::mcp::logging::ClientLogLayer;

pub fn init(args: &LoggingArgs, default_level: &str) -> Result<(), String> {
    // Every line is masked (see `Redacting`).
    let filter = args.log.as_deref().unwrap_or(default_level);
    let filter = EnvFilter::try_new(filter).map_err(|error| {
        format!("bad log filter `{filter}` (--log / CAM_LOG): {error}; try `info` or `debug`")
    })?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        // A failed write would be reported with `eprint!`, which panics when stderr is closed
        // (a host that stopped reading it): the task that logged, signal handling included,
        // would die with it.
        .log_internal_errors(false);
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
                .with_writer(Redacting(std::io::stderr.and(Mutex::new(file))))
                .finish()
                .with(ClientLogLayer)
                .init();
        }
        // MCP clients keep a server's stderr in log files: colour only on a terminal.
        None => builder
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(Redacting(std::io::stderr))
            .finish()
            .with(ClientLogLayer)
            .init(),
    }
    Ok(())
}

/// Makes writers that mask secrets before anything reaches `M`'s.
struct Redacting<M>(M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Redacting<M> {
    type Writer = RedactingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter(self.0.make_writer())
    }

    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> Self::Writer {
        RedactingWriter(self.0.make_writer_for(meta))
    }
}

struct RedactingWriter<W>(W);

impl<W: Write> Write for RedactingWriter<W> {
    /// The fmt layer writes each event as one buffer, so no secret is split between calls.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("log buffer").extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_key_in_a_log_line_is_masked_in_its_message_and_fields() {
        let captured = Captured::default();
        let sink = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(Redacting(move || sink.clone()))
            .finish();
        let key = "sk-ant-api03-Xq7dK2mN9pL4vR8sT1wY6zB3cF5gH0jA";
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(stderr = key, "the CLI said ANTHROPIC_API_KEY={key}");
        });
        let logged =
            String::from_utf8(captured.0.lock().expect("log buffer").clone()).expect("utf-8");
        assert!(!logged.contains("Xq7dK2mN9"), "{logged}");
        assert!(logged.contains("sk-ant-api03-Xq7d…[redacted]"), "{logged}");
    }
}
