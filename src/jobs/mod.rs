//! Jobs: every run a server starts, recorded in a durable store, admitted under caps, and
//! kept while it lives so calls can wait for it, page its answer and stop it.

mod changes;
mod in_place;
mod job;
mod lookup;
mod manager;
mod progress;
pub mod review;
mod scheduler;
pub mod store;
mod submit;
mod trees;
mod waiting;

pub use changes::JobChange;
pub use job::{AskFirst, Finished, Job, JobState, StopReason};
pub use manager::{EventWatch, JobOptions, Jobs, JobsError, STORE_POLL};
pub use progress::JobProgress;
pub use scheduler::{Caps, Scheduler};
pub use submit::{Refused, Submission};
pub use trees::tidy_worktrees;
