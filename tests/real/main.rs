//! The real CLIs (installed by scripts/install-clis.sh) against the mock model server, one
//! binary: `cargo test --test real`, or `scripts/test real`, which installs them. Their
//! helpers are this directory's mod.rs (module `real`), shared with the fast and conformance
//! tiers. delegate_questions also drives a browser (scripts/install-browser.sh).
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;
#[path = "../mcp/mod.rs"]
mod mcp;
#[path = "mod.rs"]
mod real;
#[path = "../web/mod.rs"]
mod web;

mod delegate_questions;
mod host_questions;
mod mcp_real_cli;
mod real_captures;
mod real_cli;
mod real_hosts;
mod real_isolation;
mod real_output_schema;
mod real_sandbox;
