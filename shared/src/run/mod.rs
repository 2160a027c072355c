//! One run, stage by stage: each stage is a module, and the type it hands on says how far the
//! run got, so no stage can be skipped or taken twice.
//!
//! 1. [`prepare`]: the request checked and its command line built, nothing started
//!    ([`Prepared`]);
//! 2. [`place`]: the run put in its tree, measured from a "before" snapshot or isolated in a
//!    worktree of its own ([`Placed`]);
//! 3. [`launch`]: the run confined, a new worktree's setup run, its CLI started (`Launched`);
//! 4. [`supervise`]: the CLI run to its end and its whole process tree torn down
//!    (`Supervised`);
//! 5. [`settle`]: the [`Outcome`](crate::Outcome): usage, the output schema, the caller's
//!    check, what the run changed, secrets masked, the session remembered.
//!
//! [`sessions`] (the ledger of sessions an engine has seen) and [`files`] (a run's own files
//! in the temp dir) serve the stages. [`crate::Engine`] is the front door that takes a run
//! through them.

mod files;
pub(crate) mod launch;
pub(crate) mod place;
pub(crate) mod prepare;
pub(crate) mod sessions;
pub(crate) mod settle;
pub(crate) mod supervise;

pub use place::Placed;
pub use prepare::Prepared;
pub use supervise::Observer;
