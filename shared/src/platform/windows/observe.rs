//! The process table as an observer reads it (the tests and the benchmarks, on every OS alike):
//! which processes there are and whose children (Toolhelp), their arguments and environment
//! (the PEB).

use std::ffi::OsString;
use std::os::windows::ffi::OsStringExt;

use windows_sys::Win32::Foundation::LocalFree;
use windows_sys::Win32::UI::Shell::CommandLineToArgvW;

use super::{peb, toolhelp};

/// Every process now, this one and the idle process (0) excepted.
pub fn process_ids() -> Vec<u32> {
    let me = std::process::id();
    toolhelp::processes()
        .into_iter()
        .map(|entry| entry.pid)
        .filter(|&pid| pid != 0 && pid != me)
        .collect()
}

/// The processes whose parent is `pid` now, this one excepted. Windows keeps a dead parent's
/// id in its children, so a child of a process that exited may name a later one's id.
pub fn children(pid: u32) -> Vec<u32> {
    let me = std::process::id();
    toolhelp::processes()
        .into_iter()
        .filter(|entry| entry.parent == pid && entry.pid != pid && entry.pid != me)
        .map(|entry| entry.pid)
        .collect()
}

/// The value of the variable `name` (matched without regard to case, as Windows does) in the
/// environment of `pid`. `None` when it has none, or the process is gone or not ours to read.
pub fn environment_value(pid: u32, name: &str) -> Option<String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return None;
    }
    let block = peb::environment(pid)?;
    block.split(|&unit| unit == 0).find_map(|entry| {
        let entry = String::from_utf16_lossy(entry);
        let (key, value) = entry.split_once('=')?;
        key.eq_ignore_ascii_case(name).then(|| value.to_owned())
    })
}

/// The arguments of `pid`, its program first, split by the rules every program's C runtime
/// uses (`CommandLineToArgvW`). `None` when it is gone or not ours to read.
pub fn arguments(pid: u32) -> Option<Vec<String>> {
    let mut line = peb::command_line(pid)?;
    if line.is_empty() {
        return None;
    }
    line.push(0);
    let mut count = 0i32;
    // SAFETY: the line is NUL-terminated UTF-16; the OS allocates the result.
    let argv = unsafe { CommandLineToArgvW(line.as_ptr(), &mut count) };
    if argv.is_null() {
        return None;
    }
    let count = usize::try_from(count).unwrap_or(0);
    // SAFETY: the OS returned `count` pointers, each to a NUL-terminated string, all in one
    // allocation that lives until the LocalFree below.
    let arguments = unsafe { std::slice::from_raw_parts(argv, count) }
        .iter()
        .map(|&arg| {
            // SAFETY: as above: a NUL-terminated string inside the allocation.
            let units = unsafe { std::slice::from_raw_parts(arg, wide_len(arg)) };
            OsString::from_wide(units).to_string_lossy().into_owned()
        })
        .collect();
    // SAFETY: the allocation CommandLineToArgvW returned, freed once.
    unsafe { LocalFree(argv.cast()) };
    Some(arguments)
}

/// The length of a NUL-terminated UTF-16 string.
///
/// # Safety
/// `text` points to a NUL-terminated UTF-16 string.
unsafe fn wide_len(text: *const u16) -> usize {
    let mut len = 0;
    // SAFETY: the caller's promise: every unit up to the NUL is readable.
    while unsafe { *text.add(len) } != 0 {
        len += 1;
    }
    len
}
