//! What the engine and the job store read of processes on Linux, from `/proc`.

use std::path::PathBuf;

/// This very binary, even if its file was replaced since it started.
pub fn current_exe() -> std::io::Result<PathBuf> {
    Ok(PathBuf::from("/proc/self/exe"))
}

/// When process `pid` started, in clock ticks since boot (field 22 of `/proc/PID/stat`): with
/// the pid, it tells a process from a later one that got the same pid. `None` when there is
/// no such process or it has exited (a zombie owns nothing any more).
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields resume after the last ')',
    // with field 3 (the state).
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    if fields.next()? == "Z" {
        return None;
    }
    fields.nth(22 - 4)?.parse().ok()
}

/// The resident memory of process `pid` now, in bytes (`VmRSS` of `/proc/PID/status`).
pub fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_ascii_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
