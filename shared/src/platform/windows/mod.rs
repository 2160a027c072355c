//! Windows: a job object per run holds its whole tree. The CLI is created suspended, put in
//! its job, then resumed, so no process of the run ever runs outside it; the job forbids
//! breakaway and kills what it holds when its last handle closes, and only this process holds
//! it. Stopping is Ctrl-Break to the CLI's process group where it shares our console, then
//! the job terminated; a run has ended only once its job reports no active process. The
//! process table is read through Toolhelp, and command lines and environments from each
//! process's PEB (Wine has no `ProcessCommandLineInformation`). No kernel sandbox.

mod figures;
mod files;
mod job;
mod live_jobs;
mod observe;
mod peb;
mod private_acl;
mod run_watch;
mod sandbox;
mod start;
mod sweep;
mod toolhelp;

#[cfg(test)]
mod tests;

pub use figures::{
    cpu_time, cpu_time_of, current_exe, process_start, release_freed_memory, resident_bytes,
    tune_allocator,
};
pub use files::{disk_bytes, exit_signal, file_id, private_dir, running_as_root, symlink};
pub use job::Job;
pub use observe::{arguments, children, environment_value, process_ids};
pub use private_acl::make_private;
pub use run_watch::RunWatch;
pub use sandbox::{
    SANDBOX_NAME, Sandbox, SpawnSandbox, build_sandbox, probe_sandbox, spawn_sandbox,
};
pub use start::start_in_job;
pub use sweep::{RunsOf, kill_runs, sweep};

/// Windows has no reaper of orphans to become, and needs none: a run's orphans stay in its
/// job, which holds them whoever their parent was.
pub fn adopt_orphans() -> std::io::Result<()> {
    Ok(())
}
