//! The engine of cli-agent-mcp: runs a coding-agent CLI headless in a session of its own,
//! parses its JSONL output into one typed event stream, decides the outcome, and tears down
//! every process the run started. It knows nothing of MCP.

pub mod dialect;
pub mod event;
pub mod outcome;
pub mod request;

pub use event::{AgentEvent, NoticeLevel};
pub use outcome::{ErrorInfo, ErrorKind, Outcome, Status, ToolCall, ToolSummary, Usage};
pub use request::{AgentKind, Permission, RunRequest};
