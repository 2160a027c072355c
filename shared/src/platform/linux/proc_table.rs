//! Reading the process table from `/proc`: who is whose child, in which group and session,
//! and which run marker a process carries.

use nix::unistd::Pid;

use crate::marker::MARKER_VAR;

/// What `/proc/<pid>/stat` says about one process.
#[derive(Clone, Debug)]
pub struct ProcStat {
    pub pid: Pid,
    state: u8,
    pub ppid: Pid,
    pub pgrp: Pid,
    pub session: Pid,
    flags: u32,
}

impl ProcStat {
    pub fn is_zombie(&self) -> bool {
        self.state == b'Z'
    }

    /// A kernel thread has no environment at all, so it never carries a marker.
    pub fn is_kernel_thread(&self) -> bool {
        const PF_KTHREAD: u32 = 0x0020_0000;
        self.flags & PF_KTHREAD != 0
    }

    pub fn read(pid: Pid) -> Option<Self> {
        let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        // The command name may contain spaces and parentheses: fields start after the last ')'.
        let after_name = stat.iter().rposition(|&b| b == b')')? + 1;
        let rest = std::str::from_utf8(&stat[after_name..]).ok()?;
        let mut fields = rest.split_ascii_whitespace();
        let state = *fields.next()?.as_bytes().first()?;
        let mut next_pid = || fields.next()?.parse().ok().map(Pid::from_raw);
        let (ppid, pgrp, session) = (next_pid()?, next_pid()?, next_pid()?);
        // After the session: tty_nr, tpgid, then the flags.
        let flags = fields.nth(2)?.parse().ok()?;
        Some(Self {
            pid,
            state,
            ppid,
            pgrp,
            session,
            flags,
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

/// What a process's environment says of one variable: of its run marker, for the sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkerRead {
    /// Its `NAME=…` entry (`CAM_RUN_ID=…` for the marker).
    Entry(Vec<u8>),
    /// It has none: no such entry, or the process is gone or not ours to read.
    Absent,
    /// Its environment read empty. A process in the middle of an exec shows none for a moment
    /// (the old memory is gone, the new one not yet set up), so this says nothing yet: ask
    /// again. A zombie or a kernel thread reads empty for good.
    Unsure,
}

pub fn read_marker(pid: Pid) -> MarkerRead {
    read_entry(pid, MARKER_VAR)
}

/// The process's `name=…` entry; the first one, as with `getenv`.
pub fn read_entry(pid: Pid, name: &str) -> MarkerRead {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return MarkerRead::Absent;
    };
    if environ.is_empty() {
        return MarkerRead::Unsure;
    }
    let name = name.as_bytes();
    environ
        .split(|&b| b == 0)
        .find(|entry| {
            entry
                .strip_prefix(name)
                .is_some_and(|rest| rest.first() == Some(&b'='))
        })
        .map_or(MarkerRead::Absent, |entry| {
            MarkerRead::Entry(entry.to_vec())
        })
}

/// The process's `CAM_RUN_ID=…` entry, if it shows one now.
pub fn marker_entry(pid: Pid) -> Option<Vec<u8>> {
    match read_marker(pid) {
        MarkerRead::Entry(entry) => Some(entry),
        MarkerRead::Absent | MarkerRead::Unsure => None,
    }
}
