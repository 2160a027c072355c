//! What the engine, the job store and the benchmarks read of processes on Windows: their
//! times and memory, through a handle opened for reading.

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::path::PathBuf;
use std::time::Duration;

use windows_sys::Win32::Foundation::{FILETIME, HANDLE, WAIT_TIMEOUT};
use windows_sys::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetProcessTimes, OpenProcess, PROCESS_ACCESS_RIGHTS,
    PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE, PROCESS_VM_READ, WaitForSingleObject,
};

/// A handle to process `pid` with `rights`; `None` when it is gone or not ours to open.
pub(super) fn open_process(pid: u32, rights: PROCESS_ACCESS_RIGHTS) -> Option<OwnedHandle> {
    // SAFETY: plain call.
    let handle = unsafe { OpenProcess(rights, 0, pid) };
    // SAFETY: a valid handle just opened, owned by nobody else.
    (!handle.is_null()).then(|| unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) })
}

/// This very binary, as the OS found it at start.
pub fn current_exe() -> std::io::Result<PathBuf> {
    std::env::current_exe()
}

/// A process's times: (creation, kernel + user), each as FILETIME's 100 ns units.
fn times(process: HANDLE) -> Option<(u64, u64)> {
    let mut stamps = [FILETIME::default(); 4];
    let [creation, exit, kernel, user] = &mut stamps;
    // SAFETY: the handle is open for querying; the four out-pointers are live.
    if unsafe { GetProcessTimes(process, creation, exit, kernel, user) } == 0 {
        return None;
    }
    let units = |t: &FILETIME| u64::from(t.dwHighDateTime) << 32 | u64::from(t.dwLowDateTime);
    Some((units(&stamps[0]), units(&stamps[2]) + units(&stamps[3])))
}

fn from_units(units: u64) -> Duration {
    Duration::from_nanos(units.saturating_mul(100))
}

/// The user and system CPU time of this process so far.
pub fn cpu_time() -> Duration {
    // SAFETY: the pseudo-handle of this process, always valid.
    times(unsafe { GetCurrentProcess() }).map_or(Duration::ZERO, |(_, cpu)| from_units(cpu))
}

/// When process `pid` started, in 100 ns units since 1601: with the id, it tells a process
/// from a later one that got the same id. `None` when there is no such process or it has
/// exited (a handle kept open elsewhere keeps an exited one listed).
pub fn process_start(pid: u32) -> Option<u64> {
    let process = open_process(pid, PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_SYNCHRONIZE)?;
    // SAFETY: the handle is open with the right to wait; 0 only looks.
    let running = unsafe { WaitForSingleObject(process.as_raw_handle(), 0) } == WAIT_TIMEOUT;
    running.then(|| times(process.as_raw_handle()).map(|(start, _)| start))?
}

/// The user and system CPU time of process `pid` so far. `None` when it is gone or not ours
/// to read.
pub fn cpu_time_of(pid: u32) -> Option<Duration> {
    let process = open_process(pid, PROCESS_QUERY_LIMITED_INFORMATION)?;
    times(process.as_raw_handle()).map(|(_, cpu)| from_units(cpu))
}

/// The resident memory (working set) of process `pid` now, in bytes.
pub fn resident_bytes(pid: u32) -> Option<u64> {
    let process = open_process(pid, PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_VM_READ)?;
    let mut counters = PROCESS_MEMORY_COUNTERS::default();
    let size = u32::try_from(size_of_val(&counters)).ok()?;
    // SAFETY: the handle is open for querying; the struct is live and `size` its size.
    let done = unsafe { K32GetProcessMemoryInfo(process.as_raw_handle(), &mut counters, size) };
    (done != 0).then(|| u64::try_from(counters.WorkingSetSize).unwrap_or(u64::MAX))
}

/// Give the memory the allocator holds freed back to the system: Windows's heap decommits
/// freed pages on its own, so there is nothing to do.
pub fn release_freed_memory() {}

/// Set the allocator up for the server: glibc's settings have no counterpart to set here.
pub fn tune_allocator() {}
