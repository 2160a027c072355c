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
