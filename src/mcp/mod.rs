//! The MCP layer, whatever carries it: the handler ([`AgentServer`]) lists the tools and
//! answers each call; it knows no transport.
//!
//! `agent_call` carries an agent tool's call from its arguments to its answer and `launch`
//! starts its job; `tools` turns a call's arguments into a run request (one file per tool),
//! the jobs run it, `result` turns the outcome into a tool result and `progress` reports
//! events on the way; `tasks` answers the tasks extension; `resources` (with
//! `subscriptions`), `prompts` and `completion` offer the jobs as documents and common work as
//! slash commands; `logging` sends the server's warnings to the clients (MCP logging).
//! `policy` bounds what a call may ask for; `ask` asks the person to lift a bound for one
//! call, as the client's protocol allows (an elicitation request, or an input request in the
//! call's answer, whose retry `pending` keeps the place of); `delegate_questions` forwards a
//! delegate's own permission questions to them. `calls`, `signals` and `lifecycle` decide
//! which runs stop, why and by when. Called by `commands::serve`, which builds the handler,
//! and by the transports, which carry it; it calls only what stands below it: `jobs`, the
//! tools on offer (`offer`), the changes report (`changes_report`), the web front (`web`, for
//! the question endpoint) and the engine.

mod agent_call;
mod ask;
mod calls;
mod completion;
mod delegate_questions;
mod handler;
mod instructions;
mod launch;
mod lifecycle;
pub mod logging;
mod models_resource;
mod pending;
pub mod policy;
mod progress;
mod prompts;
mod resources;
pub mod result;
mod session;
mod signals;
mod subscriptions;
mod tasks;
pub mod tools;

pub use self::ask::{BeyondBounds, RequestStates};
pub use self::calls::{Shutdown, ShutdownCause};
pub use self::handler::AgentServer;
pub use self::lifecycle::{EXIT_OK, EXIT_SESSION_FAILED, EXIT_USAGE, Lifecycle};
pub use self::signals::{SigintMode, watch as watch_signals};
pub use self::tools::Catalogue;
