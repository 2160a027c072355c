//! Benchmarks of the MCP server, printed as a table: `cargo bench --bench server`.
//!
//! It drives the built binary over stdio with the client in tests/support (`mcp`) and the fake
//! CLI:
//! 1. Cold start: from spawning the server to the `initialize` response, p50 and p95 of 20,
//!    with a new job store and with a large one (2000 jobs of the stand-in, each with its
//!    events and answer, recorded by a server first); goal 15 ms. Through the npm launcher
//!    (the machine's Node.js running `packaging/npm/bin/cli-agent-mcp.js`), against Node.js's
//!    own start (`node -e ''`); goal 1.2x.
//! 2. Idle memory: the server's RSS after `initialize` and `tools/list`.
//!
//! 2a. Tool list (`tools`): the bytes of `tools/list` the host's model reads (each tool's
//!    name, description and inputSchema, as compact JSON) and of the whole result, with every
//!    CLI installed and with two (the others' binaries found nowhere); the goal is 16 KB with
//!    eight CLIs, projected from the average agent tool with 100 bytes for each of `fork` and
//!    `effort` it does not take yet. Beside them, the server's instructions, which say once
//!    what every agent tool shares.
//! 3. Load: 200 concurrent calls of the fake (each streams events for 3 s, with progress): the
//!    server's peak RSS (goal 64 MiB) and the CPU time it used, and the wall time to the last
//!    answer.
//! 4. Cancel latency: from writing `notifications/cancelled` to the moment no process of the
//!    call is left (the CLI, its child and a process in its own session: each gone or a
//!    zombie, polled every 0.5 ms); p50, p99 and the worst of 100 (goal: the worst 50 ms).
//! 5. Guardian: from SIGKILL of the server to the last process of 5 runs gone (each CLI ignores
//!    SIGINT/SIGTERM and leaves group children, a session child, a daemon and a stdout holder:
//!    35 processes), p50 and p99 of 20; what the guardian costs the server's start (its spawn,
//!    timed as the server does it), and the guardian's RSS.
//! 6. Stream throughput: a long codex run of 200000 events of about 100 bytes each (a 22.5 MB
//!    burst), and a busy CLI's of 100000 events, written by two stand-ins, each called with
//!    progress reports; the goals, with the store: the burst's wall time within 1.5x of the
//!    stand-in's alone and a peak RSS of 32 MiB, and the busy CLI recorded for under 5% of
//!    one core:
//!    - as fast as the kernel takes it: tests/fixtures/quick-cli/codex with `stream=FILE` execs
//!      `awk '{ print; fflush() }' FILE` (one write per line). 10 calls on one server, taking
//!      turns with 10 on a server without a job store (a drifting machine speed slows both
//!      alike): the MB of stream per CPU-second of the server (user + system time around each
//!      call, in 10 ms ticks on Linux, so summed over the 10), the call's wall time (p50) against
//!      the same stand-in with the same prompt writing to /dev/null (started by the bench,
//!      spawn to exit, p50 of 10, in the same turns), and the server's peak RSS after the
//!      first call and after the last. Beside them the floor (Linux): the stand-in into a
//!      1 MiB pipe that a reader doing nothing else drains in batches a millisecond apart, as
//!      the server reads a fast writer; what the server adds is its wall above that floor.
//!      This stand-in writes as fast as one core allows, so the server's share of the wall
//!      time is its whole CPU time whenever the two do not run at once (two cores, shared with
//!      whatever else runs): the ratio is about (writer + server) / writer, and 1.3x would
//!      need the server to parse a line in under a third of the time the writer takes to
//!      write it.
//!    - a busy CLI: 100000 events at 10000 a second for 10 s (a python3 script the bench
//!      writes), faster than any real CLI writes (its events follow a model's output, tens to
//!      hundreds a second): the share of one core the server takes to record it, and the wall
//!      ratio, whether the server keeps up with its writer and adds no delay of its own.
//! 7. Start/cancel stress: 2000 calls of the stand-in, each cancelled once it runs: processes
//!    of the runs left, the server's open fds and zombie children, and its RSS at the start,
//!    the middle and the end.
//!
//! 8. Job store: 1000 background jobs of the stand-in (at the default cap of 8 at once),
//!    each recorded from queued to completed with its events: jobs per second from the first
//!    start to the last end, the store's bytes per job on disk, and `job_list` (50 newest)
//!    latency, p50 and p95 of 50, with the 1000 jobs in the store.
//!
//! 9. Isolation: on a synthetic repository (50000 files of 4096 bytes, 20 edited and 20
//!    untracked, as `cargo bench -p cli-agent-engine --bench git` makes it), median of 5
//!    runs, taking turns step by step, each step timed after a `sync`: the anchors `git
//!    status --porcelain` and `git status` + `git worktree add` (git's default serial
//!    checkout; a reference row with `checkout.workers=0`, the parallel checkout the server's
//!    worktrees use, shows where their speed comes from); `workspace-write` calls of a
//!    stand-in that edits one file, with `isolation: "none"` in the repository and outside
//!    git: the difference is what the before and after snapshots and the changes cost a run
//!    (x two `git status`, one for each look at the tree); and
//!    with `isolation: "worktree"`: its difference to the call outside git is the isolated
//!    set-up and settling (x the anchor). Each run is a background job, timed from the call
//!    to the `job_wait` answer; each job's worktree is discarded after, untimed.
//!
//! Processes are observed through the engine's platform module, so the bench runs on Linux and
//! macOS. A few figures are Linux's alone and read "n/a" on macOS, which keeps none of them for
//! another process: the peak and the private RSS, and the server's open fds; there the
//! guardian's RSS is read without waiting for it to block on its pipe (`wchan`).
//!
//! `cargo bench --bench server -- stream stress` runs only the sections named (cold, idle, tools,
//! load, cancel, guardian, stream, stress, jobs, isolation).
//!
//! The fake CLI is a Python script, so the load figures include 50 interpreters on the same
//! cores. No harness, only `std::time::Instant`; a few minutes on two cores. Under
//! `cargo test --all-targets` (no `--bench` argument) it runs a few of each, as a smoke test.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

// What it drives is the fake CLI and sh stand-ins, and it measures through signals, the
// guardian and /proc: on Windows it has nothing to run yet.
#[cfg(unix)]
#[path = "server/unix.rs"]
mod unix;

fn main() {
    #[cfg(unix)]
    unix::main();
    #[cfg(not(unix))]
    eprintln!("the server bench measures Linux and macOS only");
}
