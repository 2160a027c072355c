//! Running a CLI as a contained process tree: its own session, piped stdio, a group signal to
//! stop it, a sweep for whatever escaped the group, and a guardian for when we are killed.

mod guardian;
mod leader;
mod lines;
mod pidfd;
mod pipe;
mod proc_table;
mod spawn;
mod stderr_tail;
mod sweep;

pub use guardian::{GUARDIAN_COMMAND, Guardian, GuardianError, run_guardian};
pub use leader::Leader;
pub use lines::{Line, LineReader};
pub use pipe::Pipe;
pub(crate) use spawn::instance;
pub use spawn::{MarkerPrefix, RunMarker, SpawnedCli, become_subreaper, spawn};
pub use stderr_tail::StderrTail;
pub use sweep::{kill_every_run, sweep};
