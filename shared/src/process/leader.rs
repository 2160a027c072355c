//! The leader of a run's session (pid = pgid = sid), kept unreaped until the run is torn down.
//!
//! While the leader is an unreaped zombie the kernel keeps its pid, and with it the run's
//! group and session ids, out of reuse. So its exit is seen through a pidfd without reaping
//! it; the group signals and the sweep by group and session happen then; only
//! [`Leader::reap`], which consumes the leader, gives the pid back.

use std::collections::HashSet;
use std::fmt;
use std::process::ExitStatus;
use std::sync::{Mutex, MutexGuard, PoisonError};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::process::Child;

use super::pidfd::PidFd;

pub struct Leader {
    pid: Pid,
    exit: AsyncFd<PidFd>,
    /// `None` only once reaped.
    child: Option<Child>,
}

/// The leaders not yet reaped: children of ours that are not orphans left by a run.
static LIVE: Mutex<Option<HashSet<Pid>>> = Mutex::new(None);

fn live() -> MutexGuard<'static, Option<HashSet<Pid>>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `pid` is the leader of a run that has not been reaped.
pub(super) fn is_live_leader(pid: Pid) -> bool {
    live()
        .as_ref()
        .is_some_and(|leaders| leaders.contains(&pid))
}

impl Leader {
    /// Take charge of a freshly spawned, not yet awaited, session leader.
    pub(super) fn new(child: Child) -> std::io::Result<Self> {
        let pid = child
            .id()
            .ok_or_else(|| std::io::Error::other("the CLI exited before it could be tracked"))?;
        let pid = Pid::from_raw(pid as i32);
        // Nothing has waited on the child, so the pid is still this process.
        let pidfd = PidFd::open(pid)?;
        // SAFETY: the PidFd owns its fd, which stays open and unchanged until it is dropped
        // together with the AsyncFd.
        let exit = unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) }?;
        live().get_or_insert_default().insert(pid);
        Ok(Self {
            pid,
            exit,
            child: Some(child),
        })
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Resolves once the leader has exited, leaving it unreaped.
    pub async fn exited(&self) {
        if let Err(error) = self.exit.readable().await {
            tracing::warn!(leader = %self.pid, %error, "cannot watch the CLI's pidfd; taking it for exited");
        }
    }

    /// Send `signal` to the run's process group. False when the group is already gone.
    pub fn signal_group(&self, signal: Signal) -> bool {
        match killpg(self.pid, signal) {
            Ok(()) => true,
            Err(Errno::ESRCH) => false,
            Err(error) => {
                tracing::warn!(leader = %self.pid, ?signal, %error, "could not signal the CLI's process group");
                false
            }
        }
    }

    /// Reap the leader and give its pid back to the system; its exit status if it could be read.
    pub async fn reap(mut self) -> Option<ExitStatus> {
        // Forgotten first: once reaped, the pid may come back as someone else's orphan.
        forget(self.pid);
        let mut child = self.child.take()?;
        child.wait().await.ok()
    }
}

fn forget(pid: Pid) {
    if let Some(leaders) = live().as_mut() {
        leaders.remove(&pid);
    }
}

/// A leader dropped unreaped (its run was abandoned) takes its whole group with it; tokio
/// reaps the child afterwards.
impl Drop for Leader {
    fn drop(&mut self) {
        forget(self.pid);
        if self.child.is_some() {
            self.signal_group(Signal::SIGKILL);
        }
    }
}

impl fmt::Display for Leader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.pid.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::proc_table::ProcStat;

    #[tokio::test]
    async fn an_exited_leader_stays_a_zombie_holding_its_pid_until_reaped() {
        let child = tokio::process::Command::new("sh")
            .args(["-c", "exit 3"])
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        let leader = Leader::new(child).expect("leader");
        let pid = leader.pid();
        assert!(is_live_leader(pid));
        leader.exited().await;
        let stat = ProcStat::read(pid).expect("the exited leader is still in /proc");
        assert!(stat.is_zombie(), "exited, not reaped");
        assert_eq!(stat.pgrp, pid, "its group id is still held");
        assert_eq!(leader.reap().await.and_then(|s| s.code()), Some(3));
        assert!(!is_live_leader(pid));
    }
}
