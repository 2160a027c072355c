//! Start-up work that no first answer needs waits for it: the guardian's start (a thread,
//! then an exec of this binary whose page faults cost milliseconds of CPU), the job store's
//! opening and the start's log line (whose masking patterns take milliseconds to build) took
//! turns with the server's way to its `initialize` answer on a machine of two cores. The
//! transport opens this gate (stdio: once an answer is written or anything but `initialize`
//! comes; HTTP: at once); the work queued on it runs then. Whatever needs that work's result
//! waits for it as before (a run for the guardian, a job tool for the store).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

type Work = Box<dyn FnOnce() + Send>;

/// A gate that opens once and stays open; cheap to clone.
#[derive(Clone, Default)]
pub struct AfterFirstAnswer(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    open: bool,
    queued: Vec<Work>,
}

impl AfterFirstAnswer {
    /// A gate already open, for the commands that answer no client.
    pub fn open_now() -> Self {
        let gate = Self::default();
        gate.open();
        gate
    }

    /// Runs `work` once the gate is open: now if it is, else on the thread that opens it.
    pub fn then(&self, work: impl FnOnce() + Send + 'static) {
        let mut state = self.state();
        if state.open {
            drop(state);
            work();
        } else {
            state.queued.push(Box::new(work));
        }
    }

    /// Runs the queued work, in the order it came.
    pub fn open(&self) {
        for work in self.open_and_take() {
            work();
        }
    }

    /// Opens the gate when dropped, without running the queued work (the runtime it needs
    /// is gone by then): held to the end of `main`, so that what a server that ends before it
    /// answered anything queued is dropped, and nothing it holds waits for that work.
    pub fn opened_at_exit(&self) -> OpenAtExit {
        OpenAtExit(self.clone())
    }

    fn open_and_take(&self) -> Vec<Work> {
        let mut state = self.state();
        state.open = true;
        std::mem::take(&mut state.queued)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

pub struct OpenAtExit(AfterFirstAnswer);

impl Drop for OpenAtExit {
    fn drop(&mut self) {
        drop(self.0.open_and_take());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn queued_work_runs_in_order_at_the_opening_and_later_work_at_once() {
        let gate = AfterFirstAnswer::default();
        let done = Arc::new(Mutex::new(Vec::new()));
        for step in [1, 2] {
            let done = done.clone();
            gate.then(move || done.lock().unwrap().push(step));
        }
        assert!(done.lock().unwrap().is_empty());
        gate.open();
        let later = done.clone();
        gate.then(move || later.lock().unwrap().push(3));
        assert_eq!(*done.lock().unwrap(), [1, 2, 3]);
    }

    #[test]
    fn the_exit_guard_drops_the_queued_work_and_later_work_runs_at_once() {
        let gate = AfterFirstAnswer::default();
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        gate.then(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        drop(gate.opened_at_exit());
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        assert_eq!(Arc::strong_count(&ran), 1, "the queued work was dropped");
        let counter = ran.clone();
        gate.then(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(ran.load(Ordering::SeqCst), 1, "the gate is open");
    }
}
