//! Reading the process table from `/proc`: who is whose child, in which group and session,
//! and which run marker a process carries.

use nix::unistd::Pid;

use super::spawn::MARKER_VAR;

/// What `/proc/<pid>/stat` says about one process.
#[derive(Clone, Debug)]
pub struct ProcStat {
    pub pid: Pid,
    state: u8,
    pub ppid: Pid,
    pub pgrp: Pid,
    pub session: Pid,
}

impl ProcStat {
    pub fn is_zombie(&self) -> bool {
        self.state == b'Z'
    }

    pub fn read(pid: Pid) -> Option<Self> {
        let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        // The command name may contain spaces and parentheses: fields start after the last ')'.
        let after_name = stat.iter().rposition(|&b| b == b')')? + 1;
        let rest = std::str::from_utf8(&stat[after_name..]).ok()?;
        let mut fields = rest.split_ascii_whitespace();
        let state = *fields.next()?.as_bytes().first()?;
        let mut next_pid = || fields.next()?.parse().ok().map(Pid::from_raw);
        Some(Self {
            pid,
            state,
            ppid: next_pid()?,
            pgrp: next_pid()?,
            session: next_pid()?,
        })
    }
}

/// The pids in `/proc`, this process excluded.
pub fn pids() -> impl Iterator<Item = Pid> {
    let me = Pid::this();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .map(Pid::from_raw)
        .filter(move |pid| *pid != me)
}

pub fn process_table() -> impl Iterator<Item = ProcStat> {
    pids().filter_map(ProcStat::read)
}

/// The process's `CAM_RUN_ID=…` entry, if it has one. A zombie, a process of another user
/// and a process that has gone all have none.
pub fn marker_entry(pid: Pid) -> Option<Vec<u8>> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let name = MARKER_VAR.as_bytes();
    environ
        .split(|&b| b == 0)
        .find(|entry| {
            entry
                .strip_prefix(name)
                .is_some_and(|rest| rest.first() == Some(&b'='))
        })
        .map(<[u8]>::to_vec)
}
