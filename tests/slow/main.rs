//! The slow tests that need no outside tool, kept out of the inner loop
//! (`cargo test --test slow`): new_cli builds a throwaway CLI's copy of the workspace (minutes),
//! and load runs 400 calls at once, whose 1200 processes would slow every test running beside
//! it in a shared binary.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

use cli_agent_test_support::{common, mcp};

mod load;
mod new_cli;
