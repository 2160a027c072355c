//! The real CLIs (installed by scripts/install-clis.sh) against the mock model server, one
//! binary: `cargo test --test real`, or `scripts/test real`, which installs them. Their
//! helpers are the support crate's `real` (tests/support), shared with the fast and
//! conformance tiers. delegate_questions also drives a browser (scripts/install-browser.sh).
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]
// Unix only: each real CLI runs behind a sh wrapper with HOME and XDG_* in a sandbox, and the
// tier checks what it leaves through signals and process groups.
#![cfg(unix)]

use cli_agent_test_support::{common, mcp, real, web};

mod delegate_questions;
mod host_questions;
mod mcp_real_cli;
mod real_captures;
mod real_cli;
mod real_fork_effort;
mod real_hosts;
mod real_isolation;
mod real_models;
mod real_output_schema;
mod real_sandbox;
