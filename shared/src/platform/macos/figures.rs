//! What the engine, the job store and the benchmarks read of processes on macOS, from libproc.

use std::path::PathBuf;
use std::time::Duration;

use super::libproc::{bsd_info, task_figures};

/// This very binary, as the OS found it at exec.
pub fn current_exe() -> std::io::Result<PathBuf> {
    std::env::current_exe()
}

/// When process `pid` started, in microseconds since the epoch: with the pid, it tells a
/// process from a later one that got the same pid. `None` when there is no such process or
/// it has exited (a zombie owns nothing any more).
pub fn process_start(pid: u32) -> Option<u64> {
    let info = bsd_info(i32::try_from(pid).ok()?)?;
    (!info.zombie).then_some(info.start)
}

/// The resident memory of process `pid` now, in bytes.
pub fn resident_bytes(pid: u32) -> Option<u64> {
    task_figures(i32::try_from(pid).ok()?).map(|figures| figures.resident_bytes)
}

/// The user and system CPU time of process `pid` so far. `None` when it is gone, a zombie, or
/// not ours to read.
pub fn cpu_time_of(pid: u32) -> Option<Duration> {
    task_figures(i32::try_from(pid).ok()?).map(|figures| figures.cpu)
}

/// Give the memory the allocator holds freed back to the system: macOS's allocator returns
/// freed pages on its own, so there is nothing to do.
pub fn release_freed_memory() {}

/// Set the allocator up for the server: glibc's settings have no counterpart to set here.
pub fn tune_allocator() {}
