//! The transports that carry the MCP handler: stdio (one session on stdin/stdout) and
//! Streamable HTTP (many sessions on one address). `commands::serve` starts the one it was
//! asked for with the handler and the lifecycle it built; a transport depends on `mcp` (and
//! HTTP on the web front, `web`) and on nothing else of this crate. Whichever carries the
//! session, `parent_pipe` ends it when the launcher that started the server dies.

pub mod http;
pub mod parent_pipe;
pub mod stdio;
