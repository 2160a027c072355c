//! A run's job object: the kernel's set of the run's processes, which every descendant joins
//! at birth and cannot leave (no breakaway), and which kills what it holds when its last
//! handle closes. Its completion port tells of the job's processes as they come and go.

use std::ffi::c_void;
use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::IO::{
    CreateIoCompletionPort, GetQueuedCompletionStatus, OVERLAPPED,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_ASSOCIATE_COMPLETION_PORT, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectAssociateCompletionPortInformation,
    JobObjectBasicAccountingInformation, JobObjectBasicProcessIdList,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::SystemServices::JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO;

/// The exit code of the processes a teardown terminates (as `kill -9` gives 137 on Unix).
const TERMINATED: u32 = 1;

/// A run's job object and its completion port. Dropping it closes both handles: with
/// kill-on-close, whatever the job still holds dies then.
pub struct Job {
    job: OwnedHandle,
    port: OwnedHandle,
}

/// A handle the OS gave back, or the OS's error when it gave none.
fn owned(handle: HANDLE) -> io::Result<OwnedHandle> {
    if handle.is_null() || handle == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a valid handle just returned to us, owned by nobody else.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) })
}

/// Set one of the job's information classes from `value`.
fn set_information<T>(job: &OwnedHandle, class: i32, value: &T) -> io::Result<()> {
    let size = u32::try_from(size_of::<T>()).map_err(io::Error::other)?;
    // SAFETY: `value` is a live `T` of `size` bytes, the struct this class reads.
    let done = unsafe {
        SetInformationJobObject(
            job.as_raw_handle(),
            class,
            std::ptr::from_ref(value).cast(),
            size,
        )
    };
    if done == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Job {
    /// A new job that kills its processes when its last handle closes, forbids breakaway,
    /// and reports its processes' comings and goings to a port of its own.
    pub fn new() -> io::Result<Self> {
        // SAFETY: no security attributes (the default: not inherited), no name.
        let job = owned(unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) })?;
        // SAFETY: a zeroed limit struct is valid: no limit set.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        // Only kill-on-close: JOB_OBJECT_LIMIT_BREAKAWAY_OK and SILENT_BREAKAWAY_OK stay unset,
        // so CREATE_BREAKAWAY_FROM_JOB fails and every child is born in the job.
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        set_information(&job, JobObjectExtendedLimitInformation, &limits)?;
        // SAFETY: a new port, not tied to any file; one thread reads it at a time.
        let port = owned(unsafe {
            CreateIoCompletionPort(INVALID_HANDLE_VALUE, std::ptr::null_mut(), 0, 1)
        })?;
        let association = JOBOBJECT_ASSOCIATE_COMPLETION_PORT {
            CompletionKey: job.as_raw_handle(),
            CompletionPort: port.as_raw_handle(),
        };
        set_information(
            &job,
            JobObjectAssociateCompletionPortInformation,
            &association,
        )?;
        Ok(Self { job, port })
    }

    /// Put `process` in the job. Do it before the process runs, or a child it starts first
    /// would be outside.
    pub fn assign(&self, process: BorrowedHandle<'_>) -> io::Result<()> {
        // SAFETY: both handles are open: the job's is ours, the process's borrowed.
        let done =
            unsafe { AssignProcessToJobObject(self.job.as_raw_handle(), process.as_raw_handle()) };
        if done == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Terminate every process of the job. False when the OS refused.
    pub fn terminate(&self) -> bool {
        // SAFETY: the job's handle is open.
        let done = unsafe { TerminateJobObject(self.job.as_raw_handle(), TERMINATED) } != 0;
        if !done {
            let error = io::Error::last_os_error();
            tracing::warn!(%error, "could not terminate a run's job object");
        }
        done
    }

    /// How many of the job's processes have not exited yet.
    pub fn active_processes(&self) -> io::Result<u32> {
        let mut accounting = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION::default();
        let size = u32::try_from(size_of_val(&accounting)).map_err(io::Error::other)?;
        // SAFETY: the struct is this class's and `size` its size; the job's handle is open.
        let done = unsafe {
            QueryInformationJobObject(
                self.job.as_raw_handle(),
                JobObjectBasicAccountingInformation,
                std::ptr::from_mut(&mut accounting).cast(),
                size,
                std::ptr::null_mut(),
            )
        };
        if done == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(accounting.ActiveProcesses)
    }

    /// The ids of the job's processes now (at most 1024: a run has far fewer).
    pub fn process_ids(&self) -> io::Result<Vec<u32>> {
        // The list's header (two u32 counts), then one usize per process.
        const MOST: usize = 1024;
        let mut buffer = vec![0usize; 1 + MOST];
        let size = u32::try_from(size_of_val(buffer.as_slice())).map_err(io::Error::other)?;
        // SAFETY: the buffer holds `size` bytes, aligned for the list's header and entries.
        let done = unsafe {
            QueryInformationJobObject(
                self.job.as_raw_handle(),
                JobObjectBasicProcessIdList,
                buffer.as_mut_ptr().cast::<c_void>(),
                size,
                std::ptr::null_mut(),
            )
        };
        if done == 0 {
            return Err(io::Error::last_os_error());
        }
        // The header's second u32 (on little-endian Windows, the high half of the first
        // usize) is the number of ids in the list.
        let header = u64::try_from(buffer[0]).unwrap_or(0);
        let listed = usize::try_from(header >> 32).unwrap_or(0).min(MOST);
        Ok(buffer[1..=listed]
            .iter()
            .filter_map(|&pid| u32::try_from(pid).ok())
            .collect())
    }

    /// Wait, blocking the thread, until the job has no active process or `limit` passed; true
    /// when it is empty. The port says when the last process went; as the OS does not promise
    /// to deliver every message, the job's accounting is also asked between waits.
    pub fn wait_empty(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.active_processes().is_ok_and(|active| active == 0) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if self.next_message(left.min(ASK_AGAIN)) == Some(JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO) {
                return true;
            }
        }
    }

    /// The next message of the job's port within `wait`, if one came.
    fn next_message(&self, wait: Duration) -> Option<u32> {
        let mut message = 0u32;
        let mut key = 0usize;
        let mut overlapped: *mut OVERLAPPED = std::ptr::null_mut();
        let millis = u32::try_from(wait.as_millis()).unwrap_or(u32::MAX);
        // SAFETY: the port's handle is open and the out-pointers are live locals. For a job's
        // messages, the "overlapped" pointer carries a process id, never dereferenced.
        let got = unsafe {
            GetQueuedCompletionStatus(
                self.port.as_raw_handle(),
                &mut message,
                &mut key,
                &mut overlapped,
                millis,
            )
        };
        (got != 0).then_some(message)
    }
}

/// How long a wait on the port lasts before the job's accounting is asked again.
const ASK_AGAIN: Duration = Duration::from_millis(50);
