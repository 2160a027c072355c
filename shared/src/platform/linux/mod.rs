//! Linux: a pidfd per run's leader, the child subreaper and the parent-death signal, `/proc`
//! for the process table, Landlock, and pipe sizes.

mod child;
mod figures;
mod landlock;
mod observe;
mod pidfd;
mod proc_table;
mod run_watch;
mod sweep;

pub use child::{adopt_orphans, before_exec, sandboxed_argv, widen_pipe};
pub use figures::{
    cpu_time_of, current_exe, process_start, release_freed_memory, resident_bytes, tune_allocator,
};
pub use landlock::{
    SANDBOX_NAME, Sandbox, SpawnSandbox, build_sandbox, probe_sandbox, spawn_sandbox,
};
pub use observe::{arguments, children, environment_value, process_ids};
pub use run_watch::RunWatch;
pub use sweep::{RunsOf, kill_runs, sweep};
