//! The leader of a run's session (pid = pgid = sid), kept unreaped until the run is torn down.
//!
//! While the leader is an unreaped zombie the OS keeps its pid, and with it the run's group
//! and session ids, out of reuse. So its exit is seen without reaping it (the platform's
//! [`RunWatch`]); the group signals and the sweep happen then; only [`Leader::reap`], which
//! consumes the leader, gives the pid back.

use std::fmt;
use std::process::ExitStatus;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::Child;

use crate::platform::RunWatch;

/// A run's CLI, the leader of the run's session: its exit is watched without reaping it, so
/// its pid, group and session stay the run's until the teardown is done.
pub struct Leader {
    watch: RunWatch,
    /// `None` only once reaped.
    child: Option<Child>,
}

impl Leader {
    /// Take charge of a freshly spawned, not yet awaited, session leader.
    pub(crate) fn new(child: Child) -> std::io::Result<Self> {
        let pid = child
            .id()
            .ok_or_else(|| std::io::Error::other("the CLI exited before it could be tracked"))?;
        Ok(Self {
            watch: RunWatch::new(Pid::from_raw(pid as i32))?,
            child: Some(child),
        })
    }

    /// Its pid.
    pub fn pid(&self) -> Pid {
        self.watch.pid()
    }

    /// What the platform knows of the run while it lives, for its sweep.
    pub(crate) fn watch(&self) -> &RunWatch {
        &self.watch
    }

    /// Resolves once the leader has exited, leaving it unreaped.
    pub async fn exited(&self) {
        self.watch.exited().await;
    }

    /// Send `signal` to the run's process group. False when the group is already gone.
    pub fn signal_group(&self, signal: Signal) -> bool {
        match killpg(self.pid(), signal) {
            Ok(()) => true,
            Err(Errno::ESRCH) => false,
            Err(error) => {
                tracing::warn!(leader = %self.pid(), ?signal, %error, "could not signal the CLI's process group");
                false
            }
        }
    }

    /// Reap the leader and give its pid back to the system; its exit status if it could be read.
    pub async fn reap(mut self) -> Option<ExitStatus> {
        self.watch.release();
        let mut child = self.child.take()?;
        child.wait().await.ok()
    }
}

/// A leader dropped unreaped (its run was abandoned) takes its whole group with it; tokio
/// reaps the child afterwards.
impl Drop for Leader {
    fn drop(&mut self) {
        self.watch.release();
        if self.child.is_some() {
            self.signal_group(Signal::SIGKILL);
        }
    }
}

impl fmt::Display for Leader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.pid().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_exited_leader_stays_a_zombie_holding_its_group_until_reaped() {
        let child = tokio::process::Command::new("sh")
            .args(["-c", "exit 3"])
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        let leader = Leader::new(child).expect("leader");
        let pid = leader.pid();
        leader.exited().await;
        // The group is still there, held by the zombie: signalling it succeeds.
        assert!(leader.signal_group(Signal::SIGCONT), "exited, not reaped");
        assert_eq!(leader.reap().await.and_then(|s| s.code()), Some(3));
        assert_eq!(
            killpg(pid, Signal::SIGCONT),
            Err(Errno::ESRCH),
            "reaped: the group is gone"
        );
    }
}
