//! The engine of cli-agent-mcp: runs a coding-agent CLI headless in a session of its own,
//! parses its JSONL output into one typed event stream, decides the outcome, and tears down
//! every process the run started. It knows nothing of MCP.
//!
//! [`Engine`] is the front door: prepare a request, place it in its tree, run it with a
//! cancel token and an event observer, get an [`Outcome`]; `run/` holds the stages in turn.

// Kept by the engine itself, whatever the workspace asks: every public item says what it is,
// every unsafe block why it is sound, and nothing a user can reach unwraps (tests may; the
// few expects on constants say why each holds).
#![deny(missing_docs, clippy::undocumented_unsafe_blocks)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

// The engine contains a run's process tree with each OS's own means (see `platform`), and
// has them for Linux, macOS and Windows only: on any other OS the crate is one error, not a
// cascade of unresolved calls. `cfg_if!`, not a macro of our own, so that rustfmt finds the
// modules.
cfg_if::cfg_if! {
    if #[cfg(any(target_os = "linux", target_os = "macos", windows))] {
        pub mod agent;
        pub mod check;
        mod classify;
        pub mod cli;
        pub mod clis;
        pub mod command_line;
        pub mod config;
        pub mod dialect;
        mod engine;
        pub mod environment;
        pub mod error;
        pub mod event;
        pub mod git;
        mod head_tail;
        pub mod isolation;
        pub mod locate;
        mod marker;
        mod open_calls;
        pub mod outcome;
        pub mod output_schema;
        pub mod plain_path;
        pub mod platform;
        pub mod process;
        pub mod question;
        pub mod redact;
        pub mod request;
        mod run;
        pub mod sandbox;
        mod transcript;
        pub mod version;

        pub use agent::{Agent, Profile};
        pub use config::EngineConfig;
        pub use engine::Engine;
        pub use error::SetupError;
        pub use event::{AgentEvent, NoticeLevel, Usage};
        pub use locate::{CliSource, FoundCli, find_cli};
        pub use outcome::{ErrorInfo, ErrorKind, Outcome, Status, ToolCall, ToolSummary};
        pub use output_schema::OutputSchema;
        pub use question::{PersonAnswer, PersonQuestion, PersonWait, QuestionAbout};
        pub use request::{Base, Effort, Isolation, Permission, QuestionEndpoint, RunRequest};
        pub use run::{Observer, Placed, Prepared};
    } else {
        compile_error!(
            "cli-agent-mcp's engine has platform modules for Linux, macOS and Windows only; \
             another OS needs a module of its own in shared/src/platform/"
        );
    }
}
