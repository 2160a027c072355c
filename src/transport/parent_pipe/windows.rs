//! The launcher's pipe on Windows: entry `n` of the C runtime's table of inherited handles
//! (see [`super::crt_table`]), checked to be a pipe and made not inheritable, so the CLIs the
//! server starts do not hold it too.

use std::os::windows::io::{FromRawHandle, OwnedHandle, RawHandle};

use windows_sys::Win32::Foundation::{HANDLE, HANDLE_FLAG_INHERIT, SetHandleInformation};
use windows_sys::Win32::Storage::FileSystem::{FILE_TYPE_PIPE, GetFileType};
use windows_sys::Win32::System::Threading::{GetStartupInfoW, STARTUPINFOW};

use super::crt_table;

/// The pipe at entry `fd` of the inherited table, not inherited further; `Err` says what it
/// is instead.
///
/// # Safety
///
/// Nothing else in this process may own that handle.
pub unsafe fn open(fd: i32) -> Result<std::fs::File, String> {
    let handle = usize::try_from(fd)
        .ok()
        .and_then(|fd| crt_table::pipe_handle(&inherited_table(), fd))
        .ok_or_else(|| {
            "not a pipe in the table of handles this process inherited (a launcher passes it \
             as its child's stdio[3], as Node.js's spawn does)"
                .to_owned()
        })?;
    let handle = handle as HANDLE;
    // SAFETY: a plain query; a handle that is not open gives FILE_TYPE_UNKNOWN.
    if unsafe { GetFileType(handle) } != FILE_TYPE_PIPE {
        return Err("not a pipe".to_owned());
    }
    // SAFETY: a plain call on the handle, which is open (its type was read).
    if unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0) } == 0 {
        let error = std::io::Error::last_os_error();
        return Err(format!("not usable ({error})"));
    }
    // SAFETY: the handle is open and the caller promises no one else owns it.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) }.into())
}

/// The bytes of the table this process was started with; empty when there is none.
fn inherited_table() -> Vec<u8> {
    // SAFETY: STARTUPINFOW is plain data, for which all zeroes is a valid value.
    let mut info: STARTUPINFOW = unsafe { std::mem::zeroed() };
    info.cb = u32::try_from(size_of::<STARTUPINFOW>()).unwrap_or(u32::MAX);
    // SAFETY: fills the struct given, whose size `cb` says.
    unsafe { GetStartupInfoW(&mut info) };
    if info.lpReserved2.is_null() || info.cbReserved2 == 0 {
        return Vec::new();
    }
    // SAFETY: the OS keeps the process's startup block for its life: `cbReserved2` bytes at
    // `lpReserved2`, copied out here.
    unsafe { std::slice::from_raw_parts(info.lpReserved2, usize::from(info.cbReserved2)) }.to_vec()
}

/// A pipe end as the handle it is.
#[cfg(test)]
pub fn owned(end: impl Into<OwnedHandle>) -> OwnedHandle {
    end.into()
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::os::windows::io::AsRawHandle;

    use windows_sys::Win32::Foundation::{WAIT_OBJECT_0, WAIT_TIMEOUT};
    use windows_sys::Win32::System::Pipes::CreatePipe;
    use windows_sys::Win32::System::Threading::{
        CreateProcessW, GetExitCodeProcess, PROCESS_INFORMATION, WaitForSingleObject,
    };

    use super::super::{ParentPipe, read_to_end};
    use super::*;

    /// The child's side, run by the test below in a process of its own (ignored otherwise).
    #[test]
    #[ignore = "the child of a_launchers_stdio_3_is_found_in_the_inherited_table_and_its_end_read"]
    fn launched_child_reads_its_pipe_until_the_launcher_is_gone() {
        // SAFETY: entry 3 of this process's table is the pipe its parent made for it alone.
        let pipe = unsafe { ParentPipe::from_var(OsStr::new("3")) }.expect("the launcher's pipe");
        read_to_end(pipe).expect("read until the launcher's end closes");
    }

    /// A pipe whose read end alone may be inherited: the write end stays the launcher's.
    fn launcher_pipe() -> (OwnedHandle, OwnedHandle) {
        let (mut read, mut write) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: two out-pointers to fill and no attributes (neither end inheritable).
        let made = unsafe { CreatePipe(&mut read, &mut write, std::ptr::null(), 0) };
        assert_ne!(made, 0, "CreatePipe: {}", std::io::Error::last_os_error());
        // SAFETY: both handles were just made, and nothing else owns them.
        let (read, write) = unsafe {
            (
                OwnedHandle::from_raw_handle(read as RawHandle),
                OwnedHandle::from_raw_handle(write as RawHandle),
            )
        };
        let handle = read.as_raw_handle() as HANDLE;
        // SAFETY: a plain call on an open handle of ours.
        let inherited = unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 1) };
        assert_ne!(inherited, 0);
        (read, write)
    }

    /// The C runtime's table as Node.js's spawn makes it for `stdio[3]` alone.
    fn table_with(handle: &OwnedHandle) -> Vec<u8> {
        let mut table = 4u32.to_le_bytes().to_vec();
        table.extend_from_slice(&[0, 0, 0, 0x09]);
        for value in [0, 0, 0, handle.as_raw_handle() as usize] {
            table.extend_from_slice(&value.to_le_bytes());
        }
        table
    }

    /// This test binary, started with `table` to run the child's side only.
    fn start_child(table: &mut [u8]) -> OwnedHandle {
        let exe = std::env::current_exe().expect("the test binary");
        let line = format!(
            "\"{}\" --exact transport::parent_pipe::windows::tests::\
             launched_child_reads_its_pipe_until_the_launcher_is_gone --ignored",
            exe.display()
        );
        let mut line: Vec<u16> = line.encode_utf16().chain([0]).collect();
        let info = STARTUPINFOW {
            cb: u32::try_from(size_of::<STARTUPINFOW>()).expect("a small struct"),
            cbReserved2: u16::try_from(table.len()).expect("a small table"),
            lpReserved2: table.as_mut_ptr(),
            ..Default::default()
        };
        let mut process = PROCESS_INFORMATION::default();
        // SAFETY: a NUL-terminated command line we own, the startup block whose table lives
        // until the call returns, and an out-struct; handles are inherited for the pipe's.
        let started = unsafe {
            CreateProcessW(
                std::ptr::null(),
                line.as_mut_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                1,
                0,
                std::ptr::null(),
                std::ptr::null(),
                &info,
                &mut process,
            )
        };
        assert_ne!(
            started,
            0,
            "CreateProcessW: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: the two handles CreateProcessW gave us, owned by nobody else.
        let (process_handle, _thread) = unsafe {
            (
                OwnedHandle::from_raw_handle(process.hProcess as RawHandle),
                OwnedHandle::from_raw_handle(process.hThread as RawHandle),
            )
        };
        process_handle
    }

    #[test]
    fn a_launchers_stdio_3_is_found_in_the_inherited_table_and_its_end_read() {
        let (read, write) = launcher_pipe();
        let mut table = table_with(&read);
        let child = start_child(&mut table);
        drop(read);
        let child_handle = child.as_raw_handle() as HANDLE;
        // SAFETY: waits on a process handle we own.
        let waiting = unsafe { WaitForSingleObject(child_handle, 1000) };
        assert_eq!(
            waiting, WAIT_TIMEOUT,
            "the child ended while the launcher lived"
        );
        drop(write);
        // SAFETY: as above.
        let ended = unsafe { WaitForSingleObject(child_handle, 30_000) };
        assert_eq!(ended, WAIT_OBJECT_0, "the child missed the launcher's end");
        let mut code = u32::MAX;
        // SAFETY: an out-pointer and a process handle we own.
        assert_ne!(unsafe { GetExitCodeProcess(child_handle, &mut code) }, 0);
        assert_eq!(
            code, 0,
            "the child's side failed: its pipe was not found or not read"
        );
    }
}
