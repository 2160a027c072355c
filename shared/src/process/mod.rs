//! Running a CLI as a contained process tree: its own session, piped stdio, a group signal to
//! stop it, a sweep for whatever escaped the group, and a guardian for when we are killed.
//! What each of these asks of the OS is in [`crate::platform`].

mod guardian;
mod leader;
mod lines;
mod pipe;
mod spawn;
mod stderr_tail;

pub use guardian::{GUARDIAN_SUBCOMMAND, Guardian, GuardianError, run_guardian};
pub use leader::Leader;
pub use lines::{Line, LineReader};
pub use pipe::Pipe;
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
