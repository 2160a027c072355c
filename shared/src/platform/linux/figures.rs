//! What the engine, the job store and the benchmarks read of processes on Linux, from `/proc`.

use std::path::PathBuf;
use std::time::Duration;

/// This very binary, even if its file was replaced since it started.
pub fn current_exe() -> std::io::Result<PathBuf> {
    Ok(PathBuf::from("/proc/self/exe"))
}

/// When process `pid` started, in clock ticks since boot (field 22 of `/proc/PID/stat`): with
/// the pid, it tells a process from a later one that got the same pid. `None` when there is
/// no such process or it has exited (a zombie owns nothing any more).
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    if stat_field(&stat, 3)? == "Z" {
        return None;
    }
    stat_field(&stat, 22)?.parse().ok()
}

/// The user and system CPU time of process `pid` so far (fields 14 and 15 of
/// `/proc/PID/stat`, in clock ticks). `None` when there is no such process.
pub fn cpu_time_of(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = |number| stat_field(&stat, number)?.parse::<u64>().ok();
    let total = ticks(14)?.saturating_add(ticks(15)?);
    // SAFETY: sysconf only reads a constant of the system.
    let per_second = unsafe { nix::libc::sysconf(nix::libc::_SC_CLK_TCK) };
    let per_second = u64::try_from(per_second).ok().filter(|&hz| hz > 0)?;
    let nanos = u128::from(total) * 1_000_000_000 / u128::from(per_second);
    Some(Duration::from_nanos(
        u64::try_from(nanos).unwrap_or(u64::MAX),
    ))
}

/// Field `number` of a `/proc/PID/stat` line, counted from 1 as proc(5) does, from the third
/// (the state) on.
fn stat_field(stat: &str, number: usize) -> Option<&str> {
    // The command name (field 2) may hold spaces and parentheses: fields resume after the
    // last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(number.checked_sub(3)?)
}

/// The resident memory of process `pid` now, in bytes (`VmRSS` of `/proc/PID/status`).
pub fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_ascii_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Give the memory the allocator holds freed back to the system. A run's burst (chunks of
/// events, SQLite's pages, the events themselves) leaves glibc's heap fragmented: it kept about
/// 1.8 MiB freed in the middle of it after a 200000-event run of the stream bench.
pub fn release_freed_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free memory of the allocator's heaps to the system.
    unsafe {
        nix::libc::malloc_trim(0);
    }
}

/// Set glibc's allocator up for the server, before any other thread exists. Blocks of 128 KiB and more (a long run's transcript, its result) are mapped on their own
/// and given back when freed. glibc would otherwise raise that threshold after the first such
/// block is freed and carve the next ones from its heaps, which then keep them: the server's
/// peak RSS grew from 16 to 21-24 MiB over ten runs of the stream bench; it stays at 14.
/// And one heap for every thread: a burst frees on the job store's writer what the runtime's
/// threads allocated, and a heap per thread kept about 1 MiB more at the stream bench's peak
/// (20 MiB against 19, with the same CPU).
pub fn tune_allocator() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes a setting of the allocator; no other thread exists yet.
    unsafe {
        nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, 128 * 1024);
        nix::libc::mallopt(nix::libc::M_ARENA_MAX, 1);
    }
}
