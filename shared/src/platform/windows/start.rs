//! Starting a CLI inside its run's job with no moment outside it: created suspended, put in
//! the job, then resumed. A process started running and assigned afterwards could start a
//! child in between, and that child would never be in the job.

use std::io;
use std::os::windows::io::BorrowedHandle;

use tokio::process::{Child, Command};
use windows_sys::Win32::System::Console::GetConsoleWindow;
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, CREATE_SUSPENDED,
};

use super::job::Job;
use super::run_watch::RunWatch;
use super::toolhelp;

/// Start `cmd` in a new job object of its own and a process group of its own (so Ctrl-Break
/// can reach its tree), and return the child with the watch that holds its job. Should
/// anything fail before the child runs, it is terminated while still suspended.
pub fn start_in_job(cmd: &mut Command) -> io::Result<(Child, RunWatch)> {
    let job = Job::new()?;
    // A server with no console of its own (started by a desktop host) would give each CLI a
    // new console window; CREATE_NO_WINDOW gives it a console without one.
    // SAFETY: plain call without arguments.
    let no_console = unsafe { GetConsoleWindow() }.is_null();
    let window = if no_console { CREATE_NO_WINDOW } else { 0 };
    cmd.creation_flags(CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP | window);
    let mut child = cmd.spawn()?;
    match enter_job(&child, job) {
        Ok(watch) => Ok((child, watch)),
        Err(error) => {
            // Suspended, it has run nothing: terminating it leaves nothing behind.
            let _ = child.start_kill();
            Err(error)
        }
    }
}

/// Put the suspended `child` in `job`, watch it, then let it run.
fn enter_job(child: &Child, job: Job) -> io::Result<RunWatch> {
    let gone = || io::Error::other("the CLI's process was gone before it could be put in its job");
    let handle = child.raw_handle().ok_or_else(gone)?;
    let pid = child.id().ok_or_else(gone)?;
    // SAFETY: the child owns the handle and keeps it open for as long as it is borrowed here.
    job.assign(unsafe { BorrowedHandle::borrow_raw(handle) })?;
    let watch = RunWatch::new(pid, job)?;
    if toolhelp::resume_threads(pid)? == 0 {
        return Err(io::Error::other(
            "the CLI's process had no thread to resume",
        ));
    }
    Ok(watch)
}
