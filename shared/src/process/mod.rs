//! Running a CLI as a contained process tree: its own session (a job object on Windows), piped
//! stdio, a group signal to stop it, a sweep for whatever escaped the group, and a guardian
//! for when we are killed (none needed on Windows, where the kernel closes our jobs). What
//! each of these asks of the OS is in [`crate::platform`].

mod guardian;
mod leader;
mod lines;
#[cfg(unix)]
mod pipe;
#[cfg(windows)]
mod pipe_windows;
mod spawn;
mod stderr_tail;

pub use guardian::{GUARDIAN_SUBCOMMAND, Guardian, GuardianError, run_guardian};
pub use leader::Leader;
pub use lines::{Line, LineReader};
#[cfg(unix)]
pub use pipe::Pipe;
#[cfg(windows)]
pub use pipe_windows::Pipe;
pub use spawn::{SpawnedCli, spawn};
pub use stderr_tail::StderrTail;

pub use crate::marker::{MarkerPrefix, RunMarker};
pub use crate::platform::adopt_orphans;

/// SIGKILL every remaining process of the run and reap those that came back to us. Call it
/// after the leader exited and before reaping it. Returns how many it killed.
pub async fn sweep(leader: &Leader, marker: &RunMarker) -> usize {
    crate::platform::sweep(leader.watch(), marker).await
}

/// SIGKILL every live process that any run of this process started: the last resort of a
/// server shutdown whose teardowns did not finish in time. Returns how many it signalled.
pub fn kill_every_run() -> usize {
    let prefix = MarkerPrefix::of_this_process();
    crate::platform::kill_runs(&prefix, &crate::platform::RunsOf::this_process()).killed
}
