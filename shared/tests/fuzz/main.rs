//! The engine's fuzzers in one test binary (linking is most of an incremental run); their
//! shared corpus and configuration are this directory's mod.rs (module `fuzz`).
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

#[path = "mod.rs"]
mod fuzz;

mod fuzz_dialects;
mod fuzz_lines;
