//! What the test tiers (`tests/<tier>/main.rs`) and the benches share, as codex's
//! `mcp_test_support` is its tests': each binary imports the modules it uses
//! (`use cli_agent_test_support::{common, mcp};` at its root, so its test files say
//! `use crate::common;`), and none carries helpers it never calls.
//!
//! - [`common`]: where the repository and the built binary are, the fake CLIs, temporary
//!   directories, and the process table, where "nothing is left behind" is checked.
//! - [`mcp`]: an MCP client of the built `cli-agent-mcp` over stdio.
//! - [`real`]: the real CLIs against the mock model server, each in a sandbox of its own.
//! - [`web`]: the dashboard's HTTP client, its server-sent events, and a real browser.
//! - [`packages`]: the npm and PyPI packages `scripts/package` builds, installed without Rust.
//! - [`fuzz`]: the fuzzers' committed corpus and configuration, for either crate's fuzzers.
//! - [`long_run`] and [`synthetic_repo`]: what the server's and the engine's benches measure
//!   alike.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

pub mod common;
pub mod fuzz;
pub mod long_run;
pub mod mcp;
// Unix only: the installs link their tools into a bin dir (symlinks), and the real CLIs run
// behind a sh wrapper with HOME and XDG_* pointed into a sandbox.
#[cfg(unix)]
pub mod packages;
#[cfg(unix)]
pub mod real;
pub mod synthetic_repo;
pub mod web;
