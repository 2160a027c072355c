//! The process table as an observer reads it (the tests and the benchmarks, on every OS alike),
//! from libproc and `KERN_PROCARGS2`: which processes there are, whose children, their
//! arguments and environment.

use super::libproc::{self, all_pids, child_pids};
use crate::platform::tree::MarkerSeen;

/// Every process now, this one excepted; zombies included. A listing the kernel refused reads
/// as an empty table: an observer asks again.
pub fn process_ids() -> Vec<u32> {
    others(all_pids().unwrap_or_default())
}

/// The processes whose parent is `pid` now, this one excepted; zombies included.
pub fn children(pid: u32) -> Vec<u32> {
    i32::try_from(pid).map_or_else(|_| Vec::new(), |pid| others(child_pids(pid)))
}

/// The value of the variable `name` in the environment of `pid`. `None` when it has none, or
/// the process is gone, not ours to read, or a zombie.
pub fn environment_value(pid: u32, name: &str) -> Option<String> {
    match libproc::environment_value(i32::try_from(pid).ok()?, name) {
        MarkerSeen::Value(value) => Some(value),
        MarkerSeen::Absent | MarkerSeen::Unreadable => None,
    }
}

/// The arguments of `pid`, its program name first. `None` when it is gone, a zombie, or not
/// ours to read.
pub fn arguments(pid: u32) -> Option<Vec<String>> {
    libproc::arguments(i32::try_from(pid).ok()?)
}

/// The pids of a listing as the observer API gives them: the kernel's own (pid 0) and this
/// process left out, as `/proc` shows them on Linux.
fn others(pids: Vec<i32>) -> Vec<u32> {
    let me = std::process::id();
    pids.into_iter()
        .filter_map(|pid| u32::try_from(pid).ok())
        .filter(|&pid| pid != 0 && pid != me)
        .collect()
}
