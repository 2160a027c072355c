//! Signalling a run's group, and sweeping up every process of the run that escaped it.
//!
//! The real CLIs run their tools in sessions of their own, and some leave them running when
//! signalled, so a group signal is never enough. A process belongs to a run if it is in the
//! run's group or session, or carries the run's marker in its environment. Thanks to the
//! subreaper, orphans come back to this process, which reaps them by pid (never
//! `waitpid(-1)`, which could steal a status tokio is waiting for).

use std::collections::HashSet;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

use super::spawn::RunMarker;

/// Send `signal` to the run's process group. False when the group is already gone.
pub fn signal_group(leader: Pid, signal: Signal) -> bool {
    match killpg(leader, signal) {
        Ok(()) => true,
        Err(Errno::ESRCH) => false,
        Err(error) => {
            tracing::warn!(%leader, ?signal, %error, "could not signal the CLI's process group");
            false
        }
    }
}

/// How long a sweep keeps going while processes of the run are still dying.
const SWEEP_LIMIT: Duration = Duration::from_secs(5);
const SWEEP_ROUND: Duration = Duration::from_millis(10);

/// SIGKILL every remaining process of the run and reap those that were re-parented to us.
/// Returns how many processes it killed.
pub async fn sweep(leader: Pid, marker: &RunMarker) -> usize {
    let me = Pid::this();
    let marker = marker.environ_entry();
    let mut killed: HashSet<Pid> = HashSet::new();
    let deadline = tokio::time::Instant::now() + SWEEP_LIMIT;
    loop {
        let mut pending = false;
        for proc in process_table() {
            let ours = proc.pgrp == leader
                || proc.session == leader
                || killed.contains(&proc.pid)
                || (!proc.is_zombie() && has_marker(proc.pid, &marker));
            if !ours || proc.pid == me {
                continue;
            }
            if !proc.is_zombie() {
                let _ = kill(proc.pid, Signal::SIGKILL);
                killed.insert(proc.pid);
                pending = true;
            } else if proc.ppid == me {
                let _ = waitpid(proc.pid, Some(WaitPidFlag::WNOHANG));
            } else {
                // Its parent is one of ours too: once that dies, the zombie comes to us.
                pending = true;
            }
        }
        if !pending {
            return killed.len();
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(%leader, "some processes of the run were still dying when the sweep gave up");
            return killed.len();
        }
        tokio::time::sleep(SWEEP_ROUND).await;
    }
}

/// What `/proc/<pid>/stat` says about one process.
struct ProcStat {
    pid: Pid,
    state: u8,
    ppid: Pid,
    pgrp: Pid,
    session: Pid,
}

impl ProcStat {
    fn is_zombie(&self) -> bool {
        self.state == b'Z'
    }

    fn read(pid: i32) -> Option<Self> {
        let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        // The command name may contain spaces and parentheses: fields start after the last ')'.
        let after_name = stat.iter().rposition(|&b| b == b')')? + 1;
        let rest = std::str::from_utf8(&stat[after_name..]).ok()?;
        let mut fields = rest.split_ascii_whitespace();
        let state = *fields.next()?.as_bytes().first()?;
        let mut next_pid = || fields.next()?.parse().ok().map(Pid::from_raw);
        Some(Self {
            pid: Pid::from_raw(pid),
            state,
            ppid: next_pid()?,
            pgrp: next_pid()?,
            session: next_pid()?,
        })
    }
}

fn process_table() -> impl Iterator<Item = ProcStat> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter_map(ProcStat::read)
}

fn has_marker(pid: Pid, marker: &[u8]) -> bool {
    environ_has(pid, |entry| entry == marker)
}

fn environ_has(pid: Pid, mut matches: impl FnMut(&[u8]) -> bool) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|&b| b == 0).any(&mut matches))
}

/// SIGKILL every live process that any run of this process started: the last resort of a
/// server shutdown whose teardowns did not finish in time. Returns how many it signalled.
pub fn kill_every_run() -> usize {
    let prefix = RunMarker::process_prefix();
    let me = Pid::this();
    process_table()
        .filter(|proc| proc.pid != me && !proc.is_zombie())
        .filter(|proc| environ_has(proc.pid, |entry| entry.starts_with(&prefix)))
        .filter(|proc| kill(proc.pid, Signal::SIGKILL).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_every_run_kills_the_processes_marked_by_this_process_only() {
        let marked = |value: String| {
            std::process::Command::new("sleep")
                .arg("60")
                .env(super::super::spawn::MARKER_VAR, value)
                .spawn()
                .expect("spawn sleep")
        };
        let mut ours = marked(RunMarker::new().as_str().to_owned());
        let mut other = marked(format!("{}9-0-0", std::process::id()));
        assert_eq!(kill_every_run(), 1);
        assert!(
            ours.wait().expect("wait").code().is_none(),
            "killed by a signal"
        );
        assert!(
            other.try_wait().expect("try_wait").is_none(),
            "another process's run"
        );
        let _ = other.kill();
        let _ = other.wait();
    }
}
