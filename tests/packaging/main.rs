//! What ships: the npm and PyPI packages scripts/package builds, installed and used without
//! Rust, and the GitHub workflows, linted (scripts/install-workflow-lint.sh):
//! `cargo test --test packaging`, or `scripts/test packaging`.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

use cli_agent_test_support::common;
#[cfg(unix)]
use cli_agent_test_support::{mcp, packages};

// Unix only: the installs link their tools (symlinks) and the launcher's tests signal the
// server; the Windows packages are install-tested on Windows runners (.github/workflows).
#[cfg(unix)]
mod packaging;
mod workflows;
