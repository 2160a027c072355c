//! The jobs of this process's live runs, for the last resort that terminates them all.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use super::job::Job;

static JOBS: Mutex<Vec<Weak<Job>>> = Mutex::new(Vec::new());

/// Remember a run's job; forgotten once the run drops it.
pub(super) fn register(job: &Arc<Job>) {
    let mut jobs = JOBS.lock().unwrap_or_else(PoisonError::into_inner);
    jobs.retain(|job| job.strong_count() > 0);
    jobs.push(Arc::downgrade(job));
}

/// The jobs of the runs still alive.
pub(super) fn all() -> Vec<Arc<Job>> {
    JOBS.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter_map(Weak::upgrade)
        .collect()
}
