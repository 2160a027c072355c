//! A kqueue watching processes: their exit (`EVFILT_PROC` with `NOTE_EXIT`), their forks where
//! asked (`NOTE_FORK`), and a user event another thread triggers to wake a waiter
//! (`EVFILT_USER` with `NOTE_TRIGGER`). macOS's stand-in for Linux's pidfd: it watches any
//! process, not only our children, and never reaps.
//!
//! Kernel behaviour relied on (Apple's xnu, `bsd/kern/kern_event.c`, `kern_exit.c`):
//! - Registering `EVFILT_PROC` looks the pid up among live processes only. A process that has
//!   begun to exit (a zombie included) fails with `ESRCH`, and it is moved off the live list
//!   *before* `NOTE_EXIT` is posted, so a registration that succeeds always sees the exit:
//!   there is no window in which the exit is missed.
//! - `EV_CLEAR` is forced on process events and `NOTE_EXIT` makes the event one-shot: the kernel
//!   drops it after delivering the exit. Flags that arrive together (a fork, then the exit)
//!   come in one event.
//! - `NOTE_FORK` is raised by `fork`/`vfork` and by `posix_spawn` alike, and names the process
//!   that forked, never the child.
//! - No permission is checked unless `NOTE_EXITSTATUS` is asked for (it is not here).
//! - An exit of a process being traced by a debugger other than us is held back until the
//!   debugger lets it go.
//! - A kqueue descriptor is close-on-exec and close-on-fork from birth.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::libc::{self, c_int};

/// The ident of the wake-up event (`EVFILT_USER` idents are the caller's own).
const WAKE: libc::uintptr_t = 1;

/// Events read per `kevent` call; more wait for the next call.
const BATCH: usize = 64;

/// The longest timeout handed to the kernel; a longer one waits as if forever.
const LONGEST_TIMEOUT: Duration = Duration::from_secs(100_000_000);

// `struct kevent` of `sys/event.h` (`#pragma pack(4)`), as `libc` declares it: 32 bytes on
// both 64-bit targets.
const _: () = assert!(std::mem::size_of::<libc::kevent>() == 32);

/// A kqueue watching processes.
#[derive(Debug)]
pub struct ProcWatch {
    kq: OwnedFd,
}

/// One thing [`ProcWatch::wait`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcEvent {
    /// The watched process exited (it may be a zombie until its parent reaps it). Its watch is
    /// gone with it.
    Exited(i32),
    /// The watched process forked (at least once since the last wait): list its children to
    /// find the new ones.
    Forked(i32),
    /// [`ProcWatch::wake`] was called (at least once since the last wait).
    Woken,
}

/// What became of [`ProcWatch::watch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watching {
    /// Watched: its exit will be reported.
    Yes,
    /// No live process has the pid: it exited (a zombie, or reaped) or never was.
    Gone,
}

impl ProcWatch {
    /// A new kqueue, with the wake-up event registered (`EV_ADD | EV_CLEAR`).
    pub fn new() -> io::Result<Self> {
        // SAFETY: kqueue takes no arguments and returns a new descriptor or -1.
        let fd = Errno::result(unsafe { libc::kqueue() })?;
        // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
        let kq = unsafe { OwnedFd::from_raw_fd(fd) };
        let watch = Self { kq };
        watch.change(kevent_change(
            WAKE,
            libc::EVFILT_USER,
            libc::EV_ADD | libc::EV_CLEAR,
            0,
        ))?;
        Ok(watch)
    }

    /// Watch `pid` for its exit, and for its forks when `forks`. Watching a pid already watched
    /// replaces what is watched of it.
    pub fn watch(&self, pid: i32, forks: bool) -> io::Result<Watching> {
        let ident = libc::uintptr_t::try_from(pid)
            .ok()
            .filter(|&ident| ident > 0)
            .ok_or_else(|| io::Error::from(Errno::EINVAL))?;
        let notes = if forks {
            libc::NOTE_EXIT | libc::NOTE_FORK
        } else {
            libc::NOTE_EXIT
        };
        match self.change(kevent_change(ident, libc::EVFILT_PROC, libc::EV_ADD, notes)) {
            Ok(()) => Ok(Watching::Yes),
            Err(error) if error.raw_os_error() == Some(libc::ESRCH) => Ok(Watching::Gone),
            Err(error) => Err(error),
        }
    }

    /// Blocks until at least one event, or until `timeout` (`None`: forever); returns the
    /// events, none when the time ran out. `Some(Duration::ZERO)` only collects what is
    /// pending. A signal does not end the wait early.
    pub fn wait(&self, timeout: Option<Duration>) -> io::Result<Vec<ProcEvent>> {
        let deadline = timeout
            .filter(|&timeout| timeout < LONGEST_TIMEOUT)
            .map(|timeout| Instant::now() + timeout);
        loop {
            let left = deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
            let events = match self.collect(left) {
                Err(Errno::EINTR) => continue,
                Err(errno) => return Err(errno.into()),
                Ok(events) => events,
            };
            let seen: Vec<ProcEvent> = events.iter().flat_map(events_of).collect();
            if !seen.is_empty() || events.is_empty() {
                return Ok(seen);
            }
        }
    }

    /// Triggers the wake-up event: a thread in [`wait`](Self::wait) returns with
    /// [`ProcEvent::Woken`], or the next wait does at once.
    pub fn wake(&self) -> io::Result<()> {
        self.change(kevent_change(
            WAKE,
            libc::EVFILT_USER,
            0,
            libc::NOTE_TRIGGER,
        ))
    }

    /// Applies one change, reading no events. A failed change fails the call with its errno.
    fn change(&self, change: libc::kevent) -> io::Result<()> {
        loop {
            // SAFETY: one valid change; no event list (count 0), so nothing is written and the
            // call does not wait.
            let done = unsafe {
                libc::kevent(
                    self.kq.as_raw_fd(),
                    &change,
                    1,
                    ptr::null_mut(),
                    0,
                    ptr::null(),
                )
            };
            match Errno::result(done) {
                Err(Errno::EINTR) => {}
                Err(errno) => return Err(errno.into()),
                Ok(_) => return Ok(()),
            }
        }
    }

    /// One `kevent` call reading up to [`BATCH`] events, waiting at most `timeout`.
    fn collect(&self, timeout: Option<Duration>) -> Result<Vec<libc::kevent>, Errno> {
        let timespec = timeout.map(to_timespec);
        let timeout_ptr = timespec.as_ref().map_or(ptr::null(), ptr::from_ref);
        let mut events = Vec::<libc::kevent>::with_capacity(BATCH);
        let room = c_int::try_from(BATCH).unwrap_or(1);
        // SAFETY: no changes; `events` has room for `room` events; the timeout is null or
        // points to a valid timespec that outlives the call.
        let count = unsafe {
            libc::kevent(
                self.kq.as_raw_fd(),
                ptr::null(),
                0,
                events.as_mut_ptr(),
                room,
                timeout_ptr,
            )
        };
        let count = usize::try_from(Errno::result(count)?).unwrap_or(0);
        // SAFETY: the kernel filled the first `count` events, at most `room`.
        unsafe { events.set_len(count.min(BATCH)) };
        Ok(events)
    }
}

/// A change for the kqueue.
fn kevent_change(ident: libc::uintptr_t, filter: i16, flags: u16, fflags: u32) -> libc::kevent {
    libc::kevent {
        ident,
        filter,
        flags,
        fflags,
        data: 0,
        udata: ptr::null_mut(),
    }
}

/// What one kernel event says: a fork before the exit when both came together.
fn events_of(event: &libc::kevent) -> Vec<ProcEvent> {
    let (ident, filter, flags, fflags) = (event.ident, event.filter, event.flags, event.fflags);
    if flags & libc::EV_ERROR != 0 {
        return Vec::new();
    }
    if filter == libc::EVFILT_USER {
        return if ident == WAKE {
            vec![ProcEvent::Woken]
        } else {
            Vec::new()
        };
    }
    let Some(pid) = i32::try_from(ident)
        .ok()
        .filter(|_| filter == libc::EVFILT_PROC)
    else {
        return Vec::new();
    };
    let mut seen = Vec::new();
    if fflags & libc::NOTE_FORK != 0 {
        seen.push(ProcEvent::Forked(pid));
    }
    if fflags & libc::NOTE_EXIT != 0 {
        seen.push(ProcEvent::Exited(pid));
    }
    seen
}

fn to_timespec(timeout: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: libc::c_long::from(timeout.subsec_nanos()),
    }
}

impl AsRawFd for ProcWatch {
    /// The kqueue: readable while events are pending, so it can sit in tokio's `AsyncFd` (then
    /// collect with `wait(Some(Duration::ZERO))`).
    fn as_raw_fd(&self) -> RawFd {
        self.kq.as_raw_fd()
    }
}

impl AsFd for ProcWatch {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.kq.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watched_child_that_exits_is_reported() {
        let watch = ProcWatch::new().expect("kqueue");
        let mut child = std::process::Command::new("/bin/sleep")
            .arg("1")
            .spawn()
            .expect("spawn sleep");
        let pid = i32::try_from(child.id()).expect("pid");
        assert_eq!(watch.watch(pid, true).expect("watch"), Watching::Yes);
        let events = watch.wait(Some(Duration::from_secs(10))).expect("wait");
        assert_eq!(events, vec![ProcEvent::Exited(pid)]);
        child.wait().expect("reap");
    }

    #[test]
    fn a_zombie_is_already_gone() {
        let watch = ProcWatch::new().expect("kqueue");
        let mut child = std::process::Command::new("/usr/bin/true")
            .spawn()
            .expect("spawn true");
        let pid = i32::try_from(child.id()).expect("pid");
        // Unreaped until `wait` below: once it has exited, it is a zombie, and gone to kqueue.
        let deadline = Instant::now() + Duration::from_secs(10);
        while watch.watch(pid, false).expect("watch") == Watching::Yes {
            assert!(Instant::now() < deadline, "an exited child still watchable");
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait().expect("reap");
    }

    #[test]
    fn a_fork_is_reported_with_the_parents_pid() {
        let watch = ProcWatch::new().expect("kqueue");
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 0.3; /usr/bin/true; sleep 0.3"])
            .spawn()
            .expect("spawn sh");
        let pid = i32::try_from(child.id()).expect("pid");
        assert_eq!(watch.watch(pid, true).expect("watch"), Watching::Yes);
        let mut seen = Vec::new();
        while !seen.contains(&ProcEvent::Exited(pid)) {
            let events = watch.wait(Some(Duration::from_secs(10))).expect("wait");
            assert!(!events.is_empty(), "timed out; saw {seen:?}");
            seen.extend(events);
        }
        assert!(seen.contains(&ProcEvent::Forked(pid)), "{seen:?}");
        child.wait().expect("reap");
    }

    #[test]
    fn a_wake_from_another_thread_ends_a_wait() {
        let watch = std::sync::Arc::new(ProcWatch::new().expect("kqueue"));
        let waker = std::sync::Arc::clone(&watch);
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            waker.wake().expect("wake");
        });
        let events = watch.wait(None).expect("wait");
        assert_eq!(events, vec![ProcEvent::Woken]);
        thread.join().expect("waker thread");
        // EV_CLEAR: the trigger was consumed.
        assert_eq!(watch.wait(Some(Duration::ZERO)).expect("wait"), vec![]);
    }

    #[test]
    fn nothing_pending_times_out_empty() {
        let watch = ProcWatch::new().expect("kqueue");
        let events = watch.wait(Some(Duration::from_millis(20))).expect("wait");
        assert!(events.is_empty());
    }

    #[test]
    fn pids_that_cannot_be_processes_are_refused() {
        let watch = ProcWatch::new().expect("kqueue");
        for pid in [0, -1] {
            let error = watch.watch(pid, false).expect_err("refused");
            assert_eq!(error.raw_os_error(), Some(libc::EINVAL));
        }
    }
}
