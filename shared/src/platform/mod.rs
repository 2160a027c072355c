//! The operating system beneath the engine: one module per OS behind one small interface, as
//! there is one module per CLI. Every call the engine makes to the OS to contain a run goes
//! through here; the rest of the engine is the same on every OS.
//!
//! What each OS module provides (the interface):
//! - [`RunWatch`]: watches a run's session leader, started by [`crate::process::spawn`]: its
//!   exit, seen without reaping it (`exited`), and on macOS the run's forks while it lives.
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

pub(crate) mod marked;
pub(crate) mod support;

#[cfg(any(target_os = "macos", test))]
pub(crate) mod seatbelt;
#[cfg(any(target_os = "macos", test))]
pub(crate) mod teardown;
#[cfg(any(target_os = "macos", test))]
pub(crate) mod tree;

#[cfg(test)]
mod observe_tests;

pub use os::{
    RunWatch, RunsOf, SANDBOX_NAME, Sandbox, SpawnSandbox, adopt_orphans, arguments, before_exec,
    build_sandbox, children, cpu_time_of, current_exe, environment_value, kill_runs, probe_sandbox,
    process_ids, process_start, release_freed_memory, resident_bytes, sandboxed_argv,
    spawn_sandbox, sweep, tune_allocator, widen_pipe,
};

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

/// The user and system CPU time of this process so far (`getrusage`, the same on every OS).
pub fn cpu_time() -> std::time::Duration {
    let mut usage = std::mem::MaybeUninit::<nix::libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is always valid, and the
    // struct was zeroed should it fail.
    let usage = unsafe {
        nix::libc::getrusage(nix::libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: nix::libc::timeval| {
        let micros = u64::try_from(t.tv_usec).unwrap_or(0);
        std::time::Duration::new(u64::try_from(t.tv_sec).unwrap_or(0), 0)
            + std::time::Duration::from_micros(micros)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}
