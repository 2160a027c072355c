//! A run's leader seen through a pidfd: its exit is seen without reaping it, so while the
//! leader is an unreaped zombie the kernel keeps its pid, and with it the run's group and
//! session ids, out of reuse.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

use nix::unistd::Pid;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use super::pidfd::PidFd;

/// A run's leader, watched for its exit through a pidfd.
pub struct RunWatch {
    pid: Pid,
    exit: AsyncFd<PidFd>,
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

impl RunWatch {
    /// Watch `pid`, a child of ours that nothing has waited on yet (so the pid is still it).
    pub fn new(pid: Pid) -> std::io::Result<Self> {
        let pidfd = PidFd::open(pid)?;
        // SAFETY: the PidFd owns its fd, which stays open and unchanged until it is dropped
        // together with the AsyncFd.
        let exit = unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) }?;
        live().get_or_insert_default().insert(pid);
        Ok(Self { pid, exit })
    }

    /// The leader's pid.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Resolves once the leader has exited, leaving it unreaped.
    pub async fn exited(&self) {
        if let Err(error) = self.exit.readable().await {
            tracing::warn!(leader = %self.pid, %error, "cannot watch the CLI's pidfd; taking it for exited");
        }
    }

    /// The leader is about to be reaped: once it is, its pid may come back as someone
    /// else's orphan, so it is no longer a live leader.
    pub fn release(&self) {
        if let Some(leaders) = live().as_mut() {
            leaders.remove(&self.pid);
        }
    }
}

impl Drop for RunWatch {
    fn drop(&mut self) {
        self.release();
    }
}
