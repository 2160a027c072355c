//! The engine's fuzzers in one test binary (linking is most of an incremental run); their
//! shared corpus and configuration are the support crate's `fuzz` (tests/support), which the
//! server's fuzzers use too.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

use cli_agent_test_support::fuzz;

mod fuzz_dialects;
mod fuzz_lines;
