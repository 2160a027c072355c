//! After a run's leader exited: terminate what is left of its job and wait until the job
//! reports no active process; and the last resort that terminates every run's job at once.

use std::time::Duration;

use super::live_jobs;
use super::run_watch::RunWatch;
use crate::marker::{MarkerPrefix, RunMarker};
use crate::platform::marked::MarkedPass;

/// How long a sweep waits for the job to empty after terminating it: the kernel ends
/// terminated processes at once, so only a wedged driver call could take this long.
const SWEEP_LIMIT: Duration = Duration::from_secs(5);

/// Terminate what is left of the run's job, then wait until the job has no active process:
/// only then has the run ended. Returns how many processes were left (and so terminated).
/// The marker is not needed: the job holds every process of the run.
pub async fn sweep(watch: &RunWatch, _: &RunMarker) -> usize {
    let job = watch.job().clone();
    let left = job.active_processes().unwrap_or(0);
    if left > 0 {
        job.terminate();
    }
    let empty = tokio::task::spawn_blocking(move || job.wait_empty(SWEEP_LIMIT)).await;
    if !empty.unwrap_or(false) {
        tracing::warn!(
            leader = watch.pid(),
            "a run's job still had processes {SWEEP_LIMIT:?} after it was terminated"
        );
    }
    usize::try_from(left).unwrap_or(usize::MAX)
}

/// Whose runs a [`kill_runs`] pass kills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunsOf {
    /// This process's own: its live jobs.
    ThisProcess,
    /// The parent's (a guardian's view): nothing on Windows, which has no guardian; the
    /// kernel closes a dead server's jobs.
    Parent,
}

impl RunsOf {
    /// This process's runs.
    pub fn this_process() -> Self {
        Self::ThisProcess
    }

    /// The parent's runs.
    pub fn parent() -> Self {
        Self::Parent
    }
}

/// Terminate every live job of this process's runs: the server's last resort. The marker
/// prefix is not needed: the jobs hold the runs' processes.
pub fn kill_runs(_: &MarkerPrefix, runs: &RunsOf) -> MarkedPass {
    if *runs == RunsOf::Parent {
        return MarkedPass::default();
    }
    let mut killed = 0;
    for job in live_jobs::all() {
        let active = usize::try_from(job.active_processes().unwrap_or(0)).unwrap_or(0);
        if active > 0 && job.terminate() {
            killed += active;
        }
    }
    MarkedPass { killed, unsure: 0 }
}
