//! macOS: no pidfd, no subreaper, no `/proc`, no parent-death signal. A run's leader is
//! watched with kqueue; its descendants are tracked while it lives (`NOTE_FORK`) and found by
//! a full process scan that links each process to the run by the unique id of the process
//! that spawned it, with the run's marker as a second key; teardown stops the whole set,
//! rescans until nothing new appears, then kills, each signal checked against the process's
//! own unique id. The sandbox is Seatbelt through `/usr/bin/sandbox-exec`.
//!
//! What this cannot promise, and Linux can: a process that forks and exits between two scans
//! before the tracker saw it leaves a child that links to nothing (on macOS 13 and later an
//! exec also rewrites the parent's unique id a process shows); only the marker, inherited
//! through the environment, still finds that child.

mod figures;
mod kqueue;
mod libproc;
mod observe;
mod run_watch;
mod sandbox;
mod sweep;

pub use figures::{
    cpu_time_of, current_exe, process_start, release_freed_memory, resident_bytes, tune_allocator,
};
pub use observe::{arguments, children, environment_value, process_ids};
pub use run_watch::RunWatch;
pub use sandbox::{
    SANDBOX_NAME, Sandbox, SpawnSandbox, before_exec, build_sandbox, probe_sandbox, sandboxed_argv,
    spawn_sandbox,
};
pub use sweep::{RunsOf, kill_runs, sweep};

/// macOS has no reaper of orphans but init (launchd): the unique-id links and the marker find
/// a run's orphans instead. Nothing to set up.
pub fn adopt_orphans() -> std::io::Result<()> {
    Ok(())
}

/// macOS sizes a pipe by itself (up to 64 KiB as it fills) and offers no call to ask for more:
/// a fast writer just wakes the reader more often.
pub fn widen_pipe(_: std::os::fd::BorrowedFd<'_>, _: i32) -> std::io::Result<()> {
    Ok(())
}
