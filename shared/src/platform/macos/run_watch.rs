//! A run's leader watched with kqueue, and its descendants tracked while the run lives.
//!
//! The leader's exit is a `NOTE_EXIT` on a kqueue the runtime polls; it leaves the leader
//! unreaped, so its pid and group id are not reused until the run is torn down. A tracker
//! thread of the run's own waits on a second kqueue for `NOTE_FORK` from every process it
//! knows of and records the unique id of each new child (`proc_listchildpids`), so that the
//! teardown's scan links a process to the run even after the one that spawned it is gone.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use nix::unistd::Pid;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use super::kqueue::{ProcEvent, ProcWatch, Watching};
use super::libproc::{child_pids, unique_ids};

/// A run's leader, watched for its exit with kqueue, and its descendants tracked.
pub struct RunWatch {
    pid: Pid,
    exit: AsyncFd<ProcWatch>,
    exited: AtomicBool,
    tracker: Arc<Tracker>,
}

/// What the tracker thread shares with the run.
struct Tracker {
    forks: ProcWatch,
    known: Mutex<HashSet<u64>>,
    stop: AtomicBool,
}

impl RunWatch {
    /// Watch `pid`, a child of ours that nothing has waited on yet (so the pid is still it).
    pub fn new(pid: Pid) -> std::io::Result<Self> {
        let exit = ProcWatch::new()?;
        let gone = exit.watch(pid.as_raw(), false)? == Watching::Gone;
        // SAFETY: the ProcWatch owns its kqueue fd, which stays open and unchanged until it
        // is dropped together with the AsyncFd.
        let exit = unsafe { AsyncFd::register_with_interest(exit, Interest::READABLE) }?;
        let tracker = Arc::new(Tracker {
            forks: ProcWatch::new()?,
            known: Mutex::new(HashSet::new()),
            stop: AtomicBool::new(false),
        });
        tracker.follow(pid.as_raw());
        let thread = tracker.clone();
        std::thread::Builder::new()
            .name("run-tracker".into())
            .spawn(move || thread.run())?;
        Ok(Self {
            pid,
            exit,
            exited: AtomicBool::new(gone),
            tracker,
        })
    }

    /// The leader's pid.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Resolves once the leader has exited, leaving it unreaped.
    pub async fn exited(&self) {
        while !self.exited.load(Ordering::Acquire) {
            let mut ready = match self.exit.readable().await {
                Ok(ready) => ready,
                Err(error) => return self.lost(&error),
            };
            match self.exit.get_ref().wait(Some(Duration::ZERO)) {
                Ok(events) if events.contains(&ProcEvent::Exited(self.pid.as_raw())) => {
                    self.exited.store(true, Ordering::Release);
                }
                Ok(_) => ready.clear_ready(),
                Err(error) => return self.lost(&error),
            }
        }
    }

    fn lost(&self, error: &std::io::Error) {
        tracing::warn!(leader = %self.pid, %error, "cannot watch the CLI's exit; taking it for exited");
        self.exited.store(true, Ordering::Release);
    }

    /// The unique ids of every process the tracker saw in the run so far, the leader's among them.
    pub(super) fn known(&self) -> Vec<u64> {
        self.tracker.known().iter().copied().collect()
    }

    /// The run is being reaped: the tracker stops.
    pub fn release(&self) {
        self.tracker.stop.store(true, Ordering::Release);
        if let Err(error) = self.tracker.forks.wake() {
            tracing::warn!(leader = %self.pid, %error, "cannot stop the run's tracker thread");
        }
    }
}

impl Drop for RunWatch {
    fn drop(&mut self) {
        self.release();
    }
}

impl Tracker {
    fn known(&self) -> MutexGuard<'_, HashSet<u64>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tracker thread: adopt the children of every process that forks, until stopped.
    fn run(&self) {
        while !self.stop.load(Ordering::Acquire) {
            let events = match self.forks.wait(None) {
                Ok(events) => events,
                Err(error) => {
                    tracing::warn!(%error, "the run's tracker stopped: the teardown's scan alone finds its processes");
                    return;
                }
            };
            for event in events {
                if let ProcEvent::Forked(parent) = event {
                    self.adopt_children(parent);
                }
            }
        }
    }

    /// Know `pid` as the run's and watch it fork; its children already there too.
    fn follow(&self, pid: i32) {
        let Some(ids) = unique_ids(pid) else { return };
        if !self.known().insert(ids.unique_id) {
            return;
        }
        if let Ok(Watching::Yes) = self.forks.watch(pid, true) {
            self.adopt_children(pid);
        }
    }

    fn adopt_children(&self, parent: i32) {
        for child in child_pids(parent) {
            self.follow(child);
        }
    }
}
