//! The engine's fuzzers in one test binary (linking is most of an incremental run); their
//! shared corpus and configuration are this directory's mod.rs (module `fuzz`).

#[path = "mod.rs"]
mod fuzz;

mod fuzz_dialects;
mod fuzz_lines;
