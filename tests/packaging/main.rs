//! What ships: the npm and PyPI packages scripts/package builds, installed and used without
//! Rust, and the GitHub workflows, linted (scripts/install-workflow-lint.sh):
//! `cargo test --test packaging`, or `scripts/test packaging`.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;
#[path = "../mcp/mod.rs"]
mod mcp;
#[path = "../packages/mod.rs"]
mod packages;

mod packaging;
mod workflows;
