//! The operating system beneath the engine: one module per OS behind one small interface, as
//! there is one module per CLI. Every call the engine makes to the OS to contain a run goes
//! through here; the rest of the engine is the same on every OS.
//!
//! What each OS module provides (the interface):
//! - [`RunWatch`]: watches a run's session leader, started by [`crate::process::spawn`]: its
//!   exit, seen without reaping it (`exited`), and on macOS the run's forks while it lives. On
//!   Windows it also holds the run's job object (see below) and stops it (`interrupt`, `kill`).
//! - [`sweep`]: after the leader exited, kills every process of the run that is left (those
//!   that left its group too) and reaps what came back to us; how many it killed.
//! - [`kill_runs`] with [`RunsOf`]: one pass that kills every process of every run of one
//!   server instance, for the guardian and the server's last resort.
//! - [`adopt_orphans`]: makes the server the one its runs' orphans come back to, where the OS
//!   has such a thing.
//! - [`Sandbox`], [`build_sandbox`], [`spawn_sandbox`], [`probe_sandbox`], [`sandboxed_argv`] and
//!   [`before_exec`]: the kernel sandbox of a run (Landlock on Linux, Seatbelt on macOS), the
//!   child's set-up between fork and exec (death with its parent where the OS offers it).
//! - [`widen_pipe`]: a larger pipe for a fast writer, where the OS lets one ask.
//! - [`tune_allocator`] and [`release_freed_memory`]: the allocator set up for a server's
//!   bursts, and what it holds freed given back after one (glibc keeps it).
//! - [`current_exe`], [`process_start`], [`cpu_time`] and [`resident_bytes`]: what the
//!   guardian, the job store's owners and the figures read of processes.
//! - [`process_ids`], [`children`], [`arguments`], [`environment_value`], [`is_alive`] and
//!   [`cpu_time_of`]: the process table for observers (the tests and the benchmarks, which
//!   check on every OS that nothing of a run is left), each answer empty or `None` for a
//!   process that is gone or not ours to read.
//!
//! - What Unix has and Windows spells differently: [`cpu_time`] of this process,
//!   [`running_as_root`], [`exit_signal`], [`private_dir`], [`file_id`], [`disk_bytes`],
//!   [`symlink`]; and on Windows `make_private`, the DACL that mode 0700 is on Unix, for a
//!   directory outside the user's profile.
//!
//! Windows (`windows/`) fits the same interface with a job object per run instead of a
//! session: [`start_in_job`] creates the CLI suspended, assigns it, then resumes it; [`sweep`]
//! terminates the job and waits until it reports no active process; [`kill_runs`] terminates
//! every live job of this process. There is no subreaper ([`adopt_orphans`] does nothing), no
//! guardian process (the kernel closes a dead server's jobs, which kill their trees) and no
//! kernel sandbox ([`Sandbox`] is an empty type); `before_exec`, `sandboxed_argv` and
//! `widen_pipe` are Unix only.
//!
//! The logic around the macOS calls that is not a system call (linking a process table into a
//! run's tree, the stop-rescan-kill loop, the Seatbelt profile) is plain code in `tree`,
//! `teardown` and `seatbelt`, compiled on macOS and in the tests of every OS.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as os;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{cpu_time, disk_bytes, exit_signal, file_id, private_dir, running_as_root, symlink};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

pub(crate) mod marked;
pub(crate) mod support;

#[cfg(any(target_os = "macos", all(test, unix)))]
pub(crate) mod seatbelt;
#[cfg(any(target_os = "macos", test))]
pub(crate) mod teardown;
#[cfg(any(target_os = "macos", test))]
pub(crate) mod tree;

#[cfg(all(test, unix))]
mod observe_tests;

#[cfg(windows)]
pub use os::{
    Job, cpu_time, disk_bytes, exit_signal, file_id, make_private, private_dir, running_as_root,
    start_in_job, symlink,
};
pub use os::{
    RunWatch, RunsOf, SANDBOX_NAME, Sandbox, SpawnSandbox, adopt_orphans, arguments, build_sandbox,
    children, cpu_time_of, current_exe, environment_value, kill_runs, probe_sandbox, process_ids,
    process_start, release_freed_memory, resident_bytes, spawn_sandbox, sweep, tune_allocator,
};
#[cfg(unix)]
pub use os::{before_exec, sandboxed_argv, widen_pipe};

/// Whether process `pid` exists and has not exited (a zombie has, only not yet reaped).
pub fn is_alive(pid: u32) -> bool {
    process_start(pid).is_some()
}

pub use marked::{MarkedPass, UNSURE_FOR};
pub use support::{BuildError, KernelSupport};

impl KernelSupport {
    /// The running OS's, asked once.
    pub fn current() -> Self {
        static CURRENT: std::sync::OnceLock<KernelSupport> = std::sync::OnceLock::new();
        *CURRENT.get_or_init(probe_sandbox)
    }
}
