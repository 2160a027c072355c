//! The process table as an observer reads it (the tests and the benchmarks, on every OS alike),
//! from `/proc`: which processes there are, whose children, their arguments and environment.

use nix::unistd::Pid;

use super::proc_table::{self, MarkerRead};

/// Every process now, this one excepted; zombies included.
pub fn process_ids() -> Vec<u32> {
    proc_table::pids().filter_map(to_u32).collect()
}

/// The processes whose parent is `pid` now, this one excepted; zombies included.
pub fn children(pid: u32) -> Vec<u32> {
    proc_table::process_table()
        .filter(|stat| to_u32(stat.ppid) == Some(pid))
        .filter_map(|stat| to_u32(stat.pid))
        .collect()
}

/// The value of the variable `name` in the environment of `pid`. `None` when it has none, or
/// the process is gone, not ours to read, a zombie, or in the middle of an exec.
pub fn environment_value(pid: u32, name: &str) -> Option<String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return None;
    }
    match proc_table::read_entry(Pid::from_raw(i32::try_from(pid).ok()?), name) {
        MarkerRead::Entry(entry) => {
            Some(String::from_utf8_lossy(entry.get(name.len() + 1..)?).into_owned())
        }
        MarkerRead::Absent | MarkerRead::Unsure => None,
    }
}

/// The arguments of `pid`, its program name first (`/proc/PID/cmdline`). `None` when it is
/// gone, a zombie or a kernel thread (which show none).
pub fn arguments(pid: u32) -> Option<Vec<String>> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    // Each argument ends with a NUL, the last one too (unless the process rewrote them).
    let cmdline = cmdline.strip_suffix(&[0]).unwrap_or(&cmdline);
    if cmdline.is_empty() {
        return None;
    }
    let arguments = cmdline.split(|&byte| byte == 0);
    Some(
        arguments
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect(),
    )
}

fn to_u32(pid: Pid) -> Option<u32> {
    u32::try_from(pid.as_raw()).ok()
}
