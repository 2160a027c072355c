//! The server against outside MCP clients: the official conformance suite
//! (scripts/install-conformance.sh) and the official Python SDK (`.venv`, whose
//! delegate_questions client also needs the real claude): `cargo test --test conformance`, or
//! `scripts/test conformance`, which installs them.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

#[cfg(unix)]
use cli_agent_test_support::real;
use cli_agent_test_support::{common, mcp};

mod conformance;
mod mcp_interop;
