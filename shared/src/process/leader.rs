//! The leader of a run's process tree, kept until the run is torn down.
//!
//! On Unix it leads the run's session (pid = pgid = sid), and while it is an unreaped zombie
//! the OS keeps its pid, and with it the run's group and session ids, out of reuse. So its exit
//! is seen without reaping it (the platform's [`RunWatch`]); the group signals and the sweep
//! happen then; only [`Leader::reap`], which consumes the leader, gives the pid back.
//!
//! On Windows the run's tree is a job object that the [`RunWatch`] holds: stopping it is the
//! console's Ctrl-Break to the leader's process group, then the job terminated; closing the
//! job (the leader dropped, or this process dead) kills whatever is left of the tree.

use std::fmt;
use std::process::ExitStatus;

use tokio::process::Child;

use crate::platform::RunWatch;

/// A run's CLI, the leader of the run's tree: its exit is watched without giving up the
/// run's hold on its tree, so the teardown still reaches all of it.
pub struct Leader {
    watch: RunWatch,
    /// `None` only once reaped.
    child: Option<Child>,
}

impl Leader {
    /// Take charge of a freshly spawned, not yet awaited, session leader.
    #[cfg(unix)]
    pub(crate) fn new(child: Child) -> std::io::Result<Self> {
        let pid = child
            .id()
            .ok_or_else(|| std::io::Error::other("the CLI exited before it could be tracked"))?;
        let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).map_err(std::io::Error::other)?);
        Ok(Self {
            watch: RunWatch::new(pid)?,
            child: Some(child),
        })
    }

    /// Take charge of a freshly started CLI whose whole tree `watch` holds (its job).
    #[cfg(windows)]
    pub(crate) fn new(child: Child, watch: RunWatch) -> Self {
        Self {
            watch,
            child: Some(child),
        }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        #[cfg(unix)]
        return u32::try_from(self.watch.pid().as_raw()).unwrap_or_default();
        #[cfg(windows)]
        return self.watch.pid();
    }

    /// What the platform knows of the run while it lives, for its sweep.
    pub(crate) fn watch(&self) -> &RunWatch {
        &self.watch
    }

    /// Resolves once the leader has exited, the run's hold on its tree kept.
    pub async fn exited(&self) {
        self.watch.exited().await;
    }

    /// The polite first step of a stop: SIGINT to the run's process group on Unix, Ctrl-Break
    /// to it on Windows where the CLI shares our console (without one there is no grace to
    /// give: the run's job is terminated at once). False when it reached nobody.
    pub fn interrupt(&self) -> bool {
        #[cfg(unix)]
        return self.signal_group(nix::sys::signal::Signal::SIGINT);
        #[cfg(windows)]
        return self.watch.interrupt();
    }

    /// Kill the run's tree: SIGKILL to its process group on Unix (the sweep finds what left
    /// it), its job terminated on Windows. False when it was already gone.
    pub fn kill(&self) -> bool {
        #[cfg(unix)]
        return self.signal_group(nix::sys::signal::Signal::SIGKILL);
        #[cfg(windows)]
        return self.watch.kill();
    }

    /// Send `signal` to the run's process group. False when the group is already gone.
    #[cfg(unix)]
    fn signal_group(&self, signal: nix::sys::signal::Signal) -> bool {
        let group = self.watch.pid();
        match nix::sys::signal::killpg(group, signal) {
            Ok(()) => true,
            Err(nix::errno::Errno::ESRCH) => false,
            Err(error) => {
                tracing::warn!(leader = %group, ?signal, %error, "could not signal the CLI's process group");
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

/// A leader dropped unreaped (its run was abandoned) takes its whole tree with it; tokio
/// reaps the child afterwards.
impl Drop for Leader {
    fn drop(&mut self) {
        self.watch.release();
        if self.child.is_some() {
            self.kill();
        }
    }
}

impl fmt::Display for Leader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.pid().fmt(f)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use nix::errno::Errno;
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;

    use super::*;

    #[tokio::test]
    async fn an_exited_leader_stays_a_zombie_holding_its_group_until_reaped() {
        let child = tokio::process::Command::new("sh")
            .args(["-c", "exit 3"])
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        let leader = Leader::new(child).expect("leader");
        let pid = Pid::from_raw(leader.pid() as i32);
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
