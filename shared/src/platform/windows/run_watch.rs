//! A run on Windows: its leader's exit, watched through a handle to its process, and the job
//! that holds its whole tree.
//!
//! A Windows process has no zombie state to keep its id: an open handle to it does. The
//! leader's `Child` holds one until it is reaped, and the watch a second one, so the id stays
//! the leader's for as long as the run is watched.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::sync::Arc;

use tokio::sync::watch;
use windows_sys::Win32::Foundation::WAIT_OBJECT_0;
use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent};
use windows_sys::Win32::System::Threading::{
    INFINITE, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE,
    WaitForSingleObject,
};

use super::job::Job;

/// A run's leader and the job that holds its tree.
pub struct RunWatch {
    pid: u32,
    job: Arc<Job>,
    /// Becomes true once the leader exited.
    exited: watch::Receiver<bool>,
}

/// The stack of the thread that waits for a leader's exit: it only makes one call.
const WAITER_STACK: usize = 64 * 1024;

impl RunWatch {
    /// Watch the leader `pid`, a child of ours not waited on yet (so the id is still it),
    /// whose tree `job` holds.
    pub fn new(pid: u32, job: Job) -> io::Result<Self> {
        // SAFETY: plain call; the id is our un-waited child's, so it cannot name another.
        let handle = unsafe {
            OpenProcess(
                PROCESS_SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION,
                0,
                pid,
            )
        };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a valid handle just opened, owned by nobody else.
        let process = unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) };
        let (tell, exited) = watch::channel(false);
        std::thread::Builder::new()
            .name(format!("cam-leader-{pid}"))
            .stack_size(WAITER_STACK)
            .spawn(move || wait_for_exit(&process, &tell))?;
        let job = Arc::new(job);
        super::live_jobs::register(&job);
        Ok(Self { pid, job, exited })
    }

    /// The leader's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The job that holds the run's tree.
    pub fn job(&self) -> &Arc<Job> {
        &self.job
    }

    /// Resolves once the leader has exited.
    pub async fn exited(&self) {
        let mut exited = self.exited.clone();
        if let Err(error) = exited.wait_for(|exited| *exited).await {
            tracing::warn!(leader = self.pid, %error, "lost the watch on the CLI's exit; taking it for exited");
        }
    }

    /// Ctrl-Break to the leader's process group (it leads one of its own): the grace before
    /// the kill. It reaches the CLI only where it shares our console; without a console (a
    /// server started by a desktop host, CI) there is none to send it through, and so no grace
    /// to wait out: the job is terminated at once. False when the Ctrl-Break was not sent.
    pub fn interrupt(&self) -> bool {
        // SAFETY: plain call with a process group id.
        let sent = unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, self.pid) } != 0;
        if !sent {
            let error = io::Error::last_os_error();
            tracing::debug!(leader = self.pid, %error, "no Ctrl-Break for the CLI (no shared console): terminating its job now");
            self.kill();
        }
        sent
    }

    /// Terminate every process of the run's job. False when the OS refused.
    pub fn kill(&self) -> bool {
        self.job.terminate()
    }

    /// Nothing to give back before the handles close: Windows keeps no zombie.
    pub fn release(&self) {}
}

/// Block until `process` exits, then say so. Dropping `process` afterwards closes the handle.
fn wait_for_exit(process: &OwnedHandle, tell: &watch::Sender<bool>) {
    // SAFETY: the handle is open, with the right to wait on it.
    let waited = unsafe { WaitForSingleObject(process.as_raw_handle(), INFINITE) };
    if waited != WAIT_OBJECT_0 {
        let error = io::Error::last_os_error();
        tracing::warn!(%error, "could not wait for a CLI's exit; taking it for exited");
    }
    tell.send_replace(true);
}
