//! Toolhelp snapshots: the processes with their parents, and a process's threads.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};

use windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE;
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
    TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::Threading::{OpenThread, ResumeThread, THREAD_SUSPEND_RESUME};

/// One process of a snapshot.
#[derive(Clone, Copy, Debug)]
pub struct ProcessEntry {
    pub pid: u32,
    /// The process that created it (an id, which may since have been reused).
    pub parent: u32,
}

fn snapshot(what: u32) -> io::Result<OwnedHandle> {
    // SAFETY: plain call; 0 asks for the whole system.
    let handle = unsafe { CreateToolhelp32Snapshot(what, 0) };
    if handle == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a valid handle just returned to us.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) })
}

/// Every process now. An empty list if the OS refused the snapshot.
pub fn processes() -> Vec<ProcessEntry> {
    let Ok(snap) = snapshot(TH32CS_SNAPPROCESS) else {
        return Vec::new();
    };
    let mut entry = PROCESSENTRY32W {
        dwSize: u32::try_from(size_of::<PROCESSENTRY32W>()).unwrap_or(0),
        ..PROCESSENTRY32W::default()
    };
    let mut list = Vec::new();
    // SAFETY: the snapshot is open and the entry's size field is set, as the calls ask.
    let mut more = unsafe { Process32FirstW(snap.as_raw_handle(), &mut entry) } != 0;
    while more {
        list.push(ProcessEntry {
            pid: entry.th32ProcessID,
            parent: entry.th32ParentProcessID,
        });
        // SAFETY: as above.
        more = unsafe { Process32NextW(snap.as_raw_handle(), &mut entry) } != 0;
    }
    list
}

/// Resume every thread of process `pid`; how many it resumed.
pub fn resume_threads(pid: u32) -> io::Result<usize> {
    let snap = snapshot(TH32CS_SNAPTHREAD)?;
    let mut entry = THREADENTRY32 {
        dwSize: u32::try_from(size_of::<THREADENTRY32>()).unwrap_or(0),
        ..THREADENTRY32::default()
    };
    let mut resumed = 0;
    // SAFETY: the snapshot is open and the entry's size field is set, as the calls ask.
    let mut more = unsafe { Thread32First(snap.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            resume(entry.th32ThreadID)?;
            resumed += 1;
        }
        // SAFETY: as above.
        more = unsafe { Thread32Next(snap.as_raw_handle(), &mut entry) } != 0;
    }
    Ok(resumed)
}

fn resume(thread: u32) -> io::Result<()> {
    // SAFETY: plain call.
    let handle = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, thread) };
    if handle.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a valid handle just opened.
    let handle = unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) };
    // SAFETY: the handle is open with the right to resume.
    if unsafe { ResumeThread(handle.as_raw_handle()) } == u32::MAX {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
