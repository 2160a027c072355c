//! Running a CLI as a contained process tree: its own session, piped stdio, a group signal to
//! stop it, and a sweep for whatever escaped the group.

mod lines;
mod spawn;
mod stderr_tail;
mod sweep;

pub use lines::{Line, LineReader};
pub use spawn::{RunMarker, SpawnedCli, become_subreaper, spawn};
pub use stderr_tail::StderrTail;
pub use sweep::{kill_every_run, signal_group, sweep};
