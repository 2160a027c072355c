//! Process file descriptors: a handle on one process that a reused pid can never redirect.
//!
//! `pid_max` can be as small as 32768, so a pid read from `/proc` may name another process by
//! the time it is signalled. The safe order is: open a pidfd for the pid, check (again) that
//! the process behind the pid is one of ours, then signal through the pidfd. If the process
//! was replaced between the open and the check, the pidfd names the dead one and the signal
//! goes nowhere.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::sys::signal::Signal;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

/// A pidfd, opened non-blocking (so it can be polled for the process's exit).
#[derive(Debug)]
pub struct PidFd(OwnedFd);

/// What became of a process we killed, seen through its pidfd.
#[derive(Debug, PartialEq, Eq)]
pub enum Fate {
    /// Reaped, by us just now or by its parent.
    Gone,
    /// Still running, or a zombie whose parent has not reaped it yet.
    Lingering,
}

impl PidFd {
    pub fn open(pid: Pid) -> nix::Result<Self> {
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe {
            nix::libc::syscall(
                nix::libc::SYS_pidfd_open,
                pid.as_raw(),
                nix::libc::PIDFD_NONBLOCK,
            )
        };
        let fd = Errno::result(fd)?;
        let fd = RawFd::try_from(fd).map_err(|_| Errno::EBADF)?;
        // SAFETY: the kernel just returned this fd, and nothing else owns it.
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Send `signal` to this very process. A process that has been reaped gives `ESRCH`.
    pub fn signal(&self, signal: Option<Signal>) -> nix::Result<()> {
        let signal = signal.map_or(0, |signal| signal as nix::libc::c_int);
        // SAFETY: a valid pidfd, a signal number, no siginfo, no flags.
        let done = unsafe {
            nix::libc::syscall(
                nix::libc::SYS_pidfd_send_signal,
                self.0.as_raw_fd(),
                signal,
                std::ptr::null::<nix::libc::siginfo_t>(),
                0,
            )
        };
        Errno::result(done).map(drop)
    }

    /// Reap the process if it is our child and has exited; say whether it is gone.
    pub fn reap(&self) -> Fate {
        match waitid(
            Id::PIDFd(self.as_fd()),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG,
        ) {
            Ok(WaitStatus::StillAlive) => Fate::Lingering,
            Ok(_) => Fate::Gone,
            // Not our child: gone once its parent reaped it.
            Err(_) => match self.signal(None) {
                Err(Errno::ESRCH) => Fate::Gone,
                _ => Fate::Lingering,
            },
        }
    }
}

impl AsFd for PidFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl AsRawFd for PidFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// SIGKILL the process that has `pid`, provided `is_ours` still holds for it once a pidfd pins
/// it down. Returns the pidfd of the killed process, or `None` if it was not ours or gone.
pub fn kill_if(pid: Pid, is_ours: impl FnOnce(Pid) -> bool) -> Option<PidFd> {
    let pidfd = PidFd::open(pid).ok()?;
    if !is_ours(pid) {
        return None;
    }
    pidfd.signal(Some(Signal::SIGKILL)).ok()?;
    Some(pidfd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleeper() -> std::process::Child {
        std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("spawn sleep")
    }

    fn pid_of(child: &std::process::Child) -> Pid {
        Pid::from_raw(child.id() as i32)
    }

    #[test]
    fn kill_if_spares_a_process_that_fails_the_check() {
        let mut child = sleeper();
        assert!(kill_if(pid_of(&child), |_| false).is_none());
        assert!(child.try_wait().expect("try_wait").is_none(), "still alive");
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn a_pidfd_outliving_its_process_signals_nothing_and_reports_it_gone() {
        let mut child = sleeper();
        let pidfd = kill_if(pid_of(&child), |_| true).expect("killed");
        // Our child, reaped through the pidfd once the SIGKILL has done its work.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while pidfd.reap() == Fate::Lingering {
            assert!(
                std::time::Instant::now() < deadline,
                "the killed child never died"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // The pid is free for reuse now; the pidfd still names the dead process.
        assert_eq!(pidfd.signal(Some(Signal::SIGKILL)), Err(Errno::ESRCH));
        assert!(
            child.try_wait().is_err(),
            "already reaped through the pidfd"
        );
    }

    #[test]
    fn a_pidfd_reports_a_live_child_as_lingering() {
        let mut child = sleeper();
        let pidfd = PidFd::open(pid_of(&child)).expect("pidfd");
        assert_eq!(pidfd.reap(), Fate::Lingering);
        let _ = child.kill();
        let _ = child.wait();
    }
}
