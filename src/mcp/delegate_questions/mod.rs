//! A delegate's own permission questions, forwarded to the person. A CLI with a hook for them
//! (see [`cli_agent_engine::cli::Cli::question_hook`]; claude's `--permission-prompt-tool`)
//! gets a private MCP endpoint for its run: Streamable HTTP on 127.0.0.1, a random bearer
//! token, one tool, `approve`. Each question the CLI would refuse headless goes to the person
//! through the client that made the call, as its protocol allows (see `ask`); the answer goes
//! back to the CLI.
//!
//! Asked only below `unlimited` (at `unlimited` nothing asks), and only for what the call's
//! level allows: `approve` denies without asking what the level forbids outright, and the
//! kernel sandbox still bounds what an allowed tool does. Nobody to ask (no client, no
//! elicitation capability, `--ask-beyond-bounds refuse`, no answer in time) denies, with a
//! message that names the request and how to allow it, unless questions are parked
//! (`--park-questions`): then the job `needs_input` and waits for the person's answer on its
//! dashboard page. The endpoint closes with its run.

mod approve;
mod endpoint;

pub use self::approve::{Asking, QuestionsJob};
pub use self::endpoint::Endpoint;
