//! Benchmarks of the engine, printed as a table: `cargo bench -p cli-agent-engine --bench engine`.
//!
//! 1. Event parsing: each dialect's parser over ~64 MiB of the real CLIs' golden captures in
//!    `tests/fixtures/captures/<cli>/` held in memory, and over a stream of 1 MiB agent messages;
//!    MB/s and the time per line and per event, best of 3 passes.
//! 4. Per event on the server bench's long codex run (200000 events, tests/support/src/long_run.rs):
//!    the CPU time (of this thread, so other load on the machine counts less) each stage of the
//!    server's path costs, best of 3 passes: splitting the lines and
//!    parsing them; the one-line description the progress observer makes of each event; and
//!    `serde_json::to_writer` of each event into a reused buffer, as the job store's recorder
//!    writes it. Then the whole of it through the engine: `Engine::run` of the stand-in that
//!    writes the stream (tests/fixtures/quick-cli/codex, awk, one write per line): its CPU time
//!    per event, as the share of a core a busy CLI (10000 events a second) costs, and its peak
//!    RSS (Linux), best of 3, against the server's goals (under 5% of a core; at most 32 MiB
//!    for a 20 MB burst), which the engine alone must meet with room to spare; the server
//!    bench's stream and busy sections add MCP and the job store.
//! 2. Spawn to first event: `Engine::run` of the fake CLI (`tests/fixtures/bin/<cli>`), from
//!    just before the call to the first event the observer sees; p50 and p95 of 20 runs. The fake
//!    is a Python script, so this includes the interpreter's start-up, printed alongside.
//! 3. CLI exit to outcome: until `Engine::run` returns, from the terminal event the observer
//!    sees and from the CLI's exit (watched with `waitid(WNOWAIT)`, which leaves the reaping to
//!    the engine): the exit wait, the teardown sweep and the drain. p50 and p95 of 20 runs, and
//!    once more for codex with leftover children the teardown has to kill.
//!
//! 5. The Landlock sandbox, each figure with and without it, taking turns (200 each; a
//!    loaded machine slows both alike): what building a run's confinement costs the server
//!    (wall and this thread's CPU: the ruleset, its path descriptors, the private temp dir);
//!    spawn to exit of `/bin/true` confined or not (the child's `landlock_restrict_self`); and
//!    spawn to first event of the fake codex through `Engine::run` at `read-only`, with
//!    `--sandbox auto` and `off` (20 each). Goal: under 1 ms added.
//!
//! `cargo bench -p cli-agent-engine --bench engine -- long` runs only the sections named
//! (parse, spawn, exit, long, sandbox).
//!
//! It takes about half a minute on two cores; no harness, only `std::time::Instant`.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

// What it measures is Linux's and macOS's (pidfd, Landlock, POSIX CPU clocks, /proc): on
// Windows it has nothing to run yet.
#[cfg(unix)]
#[path = "engine/unix.rs"]
mod unix;

fn main() {
    #[cfg(unix)]
    unix::main();
    #[cfg(not(unix))]
    eprintln!("the engine bench measures Linux and macOS only");
}
