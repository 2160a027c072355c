//! The macOS process table: libproc (`proc_listallpids`, `proc_listchildpids`, `proc_pidinfo`)
//! and `sysctl` (`KERN_PROCARGS2`, `hw.tbfrequency`). macOS has no `/proc`; these are its
//! public ways to list processes, read their parent links and environment, and their figures.
//!
//! Pids are `i32` (`pid_t`). Every reader returns `None` (or an empty answer) for a process
//! that is gone or not ours to read: the table changes under us, so that is never an error.
//!
//! Facts this module relies on (Apple's xnu sources, `bsd/kern/proc_info.c`, `kern_sysctl.c`,
//! `kern_exec.c`, `kern_exit.c`; `libsyscall/wrappers/libproc/libproc.c`):
//! - `proc_listallpids` and `proc_listchildpids` return a count of pids (the byte count of
//!   `proc_listpids` divided by 4), 0 on error; the list includes zombies. The kernel lists at
//!   most the buffer's room, so a full buffer may mean a cut list.
//! - `proc_pidinfo` returns the bytes it wrote, 0 on error (errno set). For the flavors
//!   `PROC_PIDTBSDINFO` and `PROC_PIDUNIQIDENTIFIERINFO`, a non-zero `arg` makes it find
//!   zombies too; otherwise a zombie reads as gone (`ESRCH`).
//! - `PROC_PIDTBSDINFO` and `PROC_PIDTASKINFO` need the same user (or root);
//!   `PROC_PIDUNIQIDENTIFIERINFO` needs no privilege.

use std::mem::{self, MaybeUninit};
use std::ptr;
use std::sync::OnceLock;
use std::time::Duration;

use nix::errno::Errno;
use nix::libc::{self, c_int, c_void};
use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;

use crate::platform::teardown::Delivery;
use crate::platform::tree::MarkerSeen;

/// `PROC_PIDUNIQIDENTIFIERINFO` from xnu's `bsd/sys/proc_info_private.h` (before xnu-10002, the
/// `PRIVATE` part of `bsd/sys/proc_info.h`): not in the SDK's headers, nor in `libc`.
const PROC_PIDUNIQIDENTIFIERINFO: c_int = 17;

/// `struct proc_uniqidentifierinfo`, declared in the header above as "This structure is API"
/// with a static assertion of its size (56). Its first three fields have kept their places
/// since it appeared; the fields after them changed names and use between releases, so they
/// are read by nobody here.
#[repr(C)]
#[derive(Clone, Copy)]
struct ProcUniqIdentifierInfo {
    /// `p_uuid`: UUID of the main executable.
    _uuid: [u8; 16],
    /// `p_uniqueid`: 64-bit id of the process, never reused while the system runs.
    p_uniqueid: u64,
    /// `p_puniqueid`: the `p_uniqueid` of the process's parent when it was set (see
    /// [`UniqueIds::parent_unique_id`]).
    p_puniqueid: u64,
    /// `p_idversion`.
    _idversion: i32,
    /// `p_orig_ppidversion` in xnu-11417 (macOS 15.4), a reserved `uint32_t` before.
    _orig_ppidversion: i32,
    /// Reserved.
    _reserved: [u64; 2],
}

const _: () = assert!(mem::size_of::<ProcUniqIdentifierInfo>() == 56);
const _: () = assert!(mem::offset_of!(ProcUniqIdentifierInfo, p_uniqueid) == 16);
const _: () = assert!(mem::offset_of!(ProcUniqIdentifierInfo, p_puniqueid) == 24);
// The layouts of `bsd/sys/proc_info.h`, as `libc` declares them: sizes and the fields read.
const _: () = assert!(mem::size_of::<libc::proc_bsdinfo>() == 136);
const _: () = assert!(mem::offset_of!(libc::proc_bsdinfo, pbi_pgid) == 100);
const _: () = assert!(mem::offset_of!(libc::proc_bsdinfo, pbi_start_tvsec) == 120);
const _: () = assert!(mem::size_of::<libc::proc_taskinfo>() == 96);
const _: () = assert!(mem::offset_of!(libc::proc_taskinfo, pti_total_system) == 24);

/// A record `proc_pidinfo` fills in.
///
/// # Safety
/// Implementors are plain C data: integers and arrays of them, for which every bit pattern,
/// all zeros included, is a valid value.
unsafe trait PidInfoRecord: Copy {
    const FLAVOR: c_int;
}

// SAFETY: `proc_bsdinfo` is integers and `c_char` arrays only.
unsafe impl PidInfoRecord for libc::proc_bsdinfo {
    const FLAVOR: c_int = libc::PROC_PIDTBSDINFO;
}

// SAFETY: `proc_taskinfo` is integers only.
unsafe impl PidInfoRecord for libc::proc_taskinfo {
    const FLAVOR: c_int = libc::PROC_PIDTASKINFO;
}

// SAFETY: `ProcUniqIdentifierInfo` is integers and a byte array only.
unsafe impl PidInfoRecord for ProcUniqIdentifierInfo {
    const FLAVOR: c_int = PROC_PIDUNIQIDENTIFIERINFO;
}

/// `proc_pidinfo` for one record; `zombies` asks the kernel to find zombies too (honoured by
/// `PROC_PIDTBSDINFO` and `PROC_PIDUNIQIDENTIFIERINFO` only).
fn pid_info<T: PidInfoRecord>(pid: i32, zombies: bool) -> Option<T> {
    let size = c_int::try_from(mem::size_of::<T>()).ok()?;
    let mut record = MaybeUninit::<T>::zeroed();
    // SAFETY: `record` is writable for `size` bytes, and proc_pidinfo writes at most `size`.
    let written = unsafe {
        libc::proc_pidinfo(
            pid,
            T::FLAVOR,
            u64::from(zombies),
            record.as_mut_ptr().cast(),
            size,
        )
    };
    if written != size {
        return None;
    }
    // SAFETY: zeroed, then filled by the kernel; any bit pattern is a valid `T`
    // (`PidInfoRecord`).
    Some(unsafe { record.assume_init() })
}

/// Every pid on the system now, zombies included.
pub fn all_pids() -> std::io::Result<Vec<i32>> {
    // SAFETY: a null buffer asks for an estimate only (the process count plus 20); nothing is
    // written.
    let estimate = unsafe { libc::proc_listallpids(ptr::null_mut(), 0) };
    if estimate <= 0 {
        return Err(std::io::Error::last_os_error());
    }
    let pids = list_pids(Listing::All, usize::try_from(estimate).unwrap_or(0))?;
    if pids.is_empty() {
        // There is always launchd and us: an empty list is a failed call.
        return Err(std::io::Error::last_os_error());
    }
    Ok(pids)
}

/// The children of `pid` now (their parent pid is `pid`; zombies included). Empty when it has
/// none or the kernel refused the list.
pub fn child_pids(pid: i32) -> Vec<i32> {
    if pid <= 0 {
        return Vec::new();
    }
    list_pids(Listing::ChildrenOf(pid), 16).unwrap_or_default()
}

/// Which libproc list to read.
#[derive(Clone, Copy)]
enum Listing {
    All,
    ChildrenOf(i32),
}

/// Reads a libproc list (the call returns a count of pids, 0 on error or none) into a buffer
/// for `capacity` pids, grown while the list fills it, since a full buffer may be a cut list.
fn list_pids(listing: Listing, capacity: usize) -> std::io::Result<Vec<i32>> {
    let mut capacity = capacity.max(16);
    loop {
        let mut pids = vec![0_i32; capacity];
        let bytes = capacity
            .checked_mul(mem::size_of::<i32>())
            .and_then(|bytes| c_int::try_from(bytes).ok())
            .ok_or_else(|| std::io::Error::from(Errno::ENOMEM))?;
        let buffer: *mut c_void = pids.as_mut_ptr().cast();
        // SAFETY: `buffer` is writable for `bytes` bytes; the kernel writes at most that.
        let count = unsafe {
            match listing {
                Listing::All => libc::proc_listallpids(buffer, bytes),
                Listing::ChildrenOf(pid) => libc::proc_listchildpids(pid, buffer, bytes),
            }
        };
        let count = usize::try_from(count).unwrap_or(0);
        if count < capacity {
            pids.truncate(count);
            return Ok(pids);
        }
        capacity = capacity.saturating_mul(2);
    }
}

/// What `proc_pidinfo(PROC_PIDTBSDINFO)` says of one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BsdInfo {
    /// Its pid.
    pub pid: i32,
    /// The current parent: launchd (1) once the spawner is gone.
    pub ppid: i32,
    /// Its process group.
    pub pgid: i32,
    /// Exited, not yet reaped by its parent (`pbi_status == SZOMB`).
    pub zombie: bool,
    /// Start time in microseconds since the epoch: tells this process from a later one with the
    /// same pid.
    pub start: u64,
}

/// The BSD view of `pid`, zombies included. `None` when it is gone or not ours to read
/// (another user's).
pub fn bsd_info(pid: i32) -> Option<BsdInfo> {
    let info = pid_info::<libc::proc_bsdinfo>(pid, true)?;
    Some(BsdInfo {
        pid: i32::try_from(info.pbi_pid).ok()?,
        ppid: i32::try_from(info.pbi_ppid).ok()?,
        pgid: i32::try_from(info.pbi_pgid).ok()?,
        zombie: info.pbi_status == libc::SZOMB,
        start: info
            .pbi_start_tvsec
            .saturating_mul(1_000_000)
            .saturating_add(info.pbi_start_tvusec),
    })
}

/// The kernel's ids of one process (`PROC_PIDUNIQIDENTIFIERINFO`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UniqueIds {
    /// `p_uniqueid`: never reused while the system runs (a pid is); kept across exec.
    pub unique_id: u64,
    /// `p_puniqueid`: the `unique_id` of the parent at fork. Kept when the process is
    /// reparented, but since macOS 13 (xnu-8792) an exec rewrites it to the unique id of the
    /// parent of that moment: an orphan that execs then names launchd.
    pub parent_unique_id: u64,
}

/// The unique ids of `pid`, zombies included. Readable for every process (no privilege);
/// `None` when it is gone.
pub fn unique_ids(pid: i32) -> Option<UniqueIds> {
    unique_ids_of(pid, true)
}

fn unique_ids_of(pid: i32, zombies: bool) -> Option<UniqueIds> {
    let info = pid_info::<ProcUniqIdentifierInfo>(pid, zombies)?;
    Some(UniqueIds {
        unique_id: info.p_uniqueid,
        parent_unique_id: info.p_puniqueid,
    })
}

/// Send `signal` to `pid` only if the process there still has `unique_id`, checked just
/// before the kill: the guard against a reused pid. What remains is the moment between the
/// check and the kill, which no public macOS call closes. A zombie counts as gone.
pub fn signal_if(pid: i32, unique_id: u64, signal: Signal) -> Delivery {
    if pid <= 0 {
        // kill() would reach a group or every process.
        return Delivery::Gone;
    }
    match unique_ids_of(pid, false) {
        Some(ids) if ids.unique_id == unique_id => {}
        _ => return Delivery::Gone,
    }
    match signal::kill(Pid::from_raw(pid), signal) {
        Ok(()) => Delivery::Sent,
        Err(Errno::EPERM) => Delivery::Refused,
        Err(_) => Delivery::Gone,
    }
}

/// Resident memory and CPU time of a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskFigures {
    /// Resident memory, in bytes.
    pub resident_bytes: u64,
    /// User plus system time, of its live and its ended threads.
    pub cpu: Duration,
}

/// The figures of `pid` (`PROC_PIDTASKINFO`). `None` when it is gone, a zombie, or not ours to
/// read.
pub fn task_figures(pid: i32) -> Option<TaskFigures> {
    let info = pid_info::<libc::proc_taskinfo>(pid, false)?;
    let ticks = info.pti_total_user.saturating_add(info.pti_total_system);
    Some(TaskFigures {
        resident_bytes: info.pti_resident_size,
        cpu: ticks_to_duration(ticks),
    })
}

/// The kernel counts CPU time in Mach absolute time ticks: 1 ns on Intel, 1/24 MHz on Apple
/// silicon. The tick rate is read from `hw.tbfrequency`, not `mach_timebase_info`: under
/// Rosetta the latter answers 1/1 while the kernel's figures stay in native ticks.
fn ticks_to_duration(ticks: u64) -> Duration {
    let (numer, denom) = *TIMEBASE.get_or_init(timebase);
    let nanos = u128::from(ticks) * u128::from(numer) / u128::from(denom.max(1));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// Nanoseconds per tick, as a fraction.
static TIMEBASE: OnceLock<(u64, u64)> = OnceLock::new();

fn timebase() -> (u64, u64) {
    match tick_frequency() {
        Some(hz) => (1_000_000_000, hz),
        None => mach_timebase(),
    }
}

/// `hw.tbfrequency`: ticks per second, a 64-bit integer.
fn tick_frequency() -> Option<u64> {
    let mut hz: i64 = 0;
    let mut size = mem::size_of::<i64>();
    // SAFETY: a NUL-terminated name; `hz` is writable for `size` bytes; nothing is set.
    let done = unsafe {
        libc::sysctlbyname(
            c"hw.tbfrequency".as_ptr(),
            (&raw mut hz).cast(),
            &mut size,
            ptr::null_mut(),
            0,
        )
    };
    if done != 0 || size != mem::size_of::<i64>() {
        return None;
    }
    u64::try_from(hz).ok().filter(|&hz| hz > 0)
}

#[allow(deprecated)] // libc points to the mach2 crate; the C call itself is current.
fn mach_timebase() -> (u64, u64) {
    let mut info = libc::mach_timebase_info { numer: 0, denom: 0 };
    // SAFETY: `info` is a valid, writable mach_timebase_info.
    let done = unsafe { libc::mach_timebase_info(&mut info) };
    if done != 0 || info.numer == 0 || info.denom == 0 {
        return (1, 1);
    }
    (u64::from(info.numer), u64::from(info.denom))
}

/// The value of the variable `name` in the environment of `pid`, read with `sysctl`
/// `KERN_PROCARGS2` (the process's own user, or root, only).
pub fn environment_value(pid: i32, name: &str) -> MarkerSeen {
    match procargs2(pid) {
        Some(record) => parse_procargs2(&record, name),
        None => MarkerSeen::Unreadable,
    }
}

/// The `KERN_PROCARGS2` record of `pid`, whole. The kernel fills a short buffer with the
/// record's *end*, so a record that fills the buffer is asked again in the largest buffer.
fn procargs2(pid: i32) -> Option<Vec<u8>> {
    if pid <= 0 {
        return None;
    }
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    let largest = arg_max();
    let mut size = sysctl_size(&mut mib)?.saturating_add(64).min(largest);
    loop {
        let record = sysctl_read(&mut mib, size)?;
        if record.len() < size {
            return Some(record);
        }
        if size >= largest {
            return None;
        }
        size = largest;
    }
}

/// The size of what `sysctl` would return for `mib`.
fn sysctl_size(mib: &mut [c_int]) -> Option<usize> {
    let levels = libc::c_uint::try_from(mib.len()).ok()?;
    let mut len = 0;
    // SAFETY: `mib` holds `levels` names; a null buffer asks for the size only; nothing is set.
    let done = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            levels,
            ptr::null_mut(),
            &mut len,
            ptr::null_mut(),
            0,
        )
    };
    (done == 0).then_some(len)
}

/// What `sysctl` returns for `mib`, into a buffer of `size` bytes.
fn sysctl_read(mib: &mut [c_int], size: usize) -> Option<Vec<u8>> {
    let levels = libc::c_uint::try_from(mib.len()).ok()?;
    let mut buffer = Vec::<u8>::with_capacity(size);
    let mut len = size;
    // SAFETY: `mib` holds `levels` names; `buffer` is writable for `len` bytes; nothing is set.
    let done = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            levels,
            buffer.as_mut_ptr().cast(),
            &mut len,
            ptr::null_mut(),
            0,
        )
    };
    if done != 0 {
        return None;
    }
    // SAFETY: the kernel wrote `len` bytes at the start of the buffer, within its capacity.
    unsafe { buffer.set_len(len.min(size)) };
    Some(buffer)
}

/// `kern.argmax`: the largest buffer `KERN_PROCARGS2` accepts (plus its argc word).
fn arg_max() -> usize {
    static ARG_MAX: OnceLock<usize> = OnceLock::new();
    *ARG_MAX.get_or_init(|| {
        let mut value: c_int = 0;
        let mut size = mem::size_of::<c_int>();
        let mut mib = [libc::CTL_KERN, libc::KERN_ARGMAX];
        // SAFETY: two names; `value` is writable for `size` bytes; nothing is set.
        let done = unsafe {
            libc::sysctl(
                mib.as_mut_ptr(),
                2,
                (&raw mut value).cast(),
                &mut size,
                ptr::null_mut(),
                0,
            )
        };
        match usize::try_from(value) {
            Ok(value) if done == 0 && value > 0 => value,
            // The smallest ARG_MAX macOS has had.
            _ => 256 * 1024,
        }
    })
}

/// Finds the variable `name` in a `KERN_PROCARGS2` record: the `int` argc (native byte
/// order), the executable's path and NULs padding it to pointer size, the argc arguments,
/// then the environment, then the strings the kernel passes to dyld (`ptr_munge=…`,
/// `executable_file=…`, …), every string NUL-terminated. Nothing marks where the environment
/// ends, so those last strings are searched too; they come after it, so the environment's own
/// entry wins, and none is named like an environment variable that this engine reads. The
/// first entry of a name wins, as with `getenv`.
///
/// A record that ends right after the arguments is one whose environment the kernel withheld
/// (it always adds its own strings after the environment): that reads as [`MarkerSeen::Unreadable`].
/// Known limit: an empty first argument is taken for padding, and the entries shift by one.
pub fn parse_procargs2(record: &[u8], name: &str) -> MarkerSeen {
    if name.is_empty() || name.contains(['=', '\0']) {
        return MarkerSeen::Absent;
    }
    match after_arguments(record) {
        Some(rest) if !rest.is_empty() => find_variable(rest, name.as_bytes()),
        _ => MarkerSeen::Unreadable,
    }
}

/// The part of the record after the executable's path and the arguments; `None` when the
/// record is cut short of that.
fn after_arguments(record: &[u8]) -> Option<&[u8]> {
    split_arguments(record).map(|(_, rest)| rest)
}

/// The arguments of `pid`, its program name first, read with `sysctl` `KERN_PROCARGS2` (the
/// process's own user, or root, only). `None` when it is gone, a zombie or not ours to read.
pub fn arguments(pid: i32) -> Option<Vec<String>> {
    parse_arguments(&procargs2(pid)?)
}

/// The argc arguments of a `KERN_PROCARGS2` record (laid out as [`parse_procargs2`] says);
/// `None` when the record is cut short of them. The same known limit: an empty first argument
/// is taken for padding.
pub fn parse_arguments(record: &[u8]) -> Option<Vec<String>> {
    let (arguments, _) = split_arguments(record)?;
    let text = |arg: &[u8]| String::from_utf8_lossy(arg).into_owned();
    Some(arguments.into_iter().map(text).collect())
}

/// The record's arguments, and the part of it that follows them.
fn split_arguments(record: &[u8]) -> Option<(Vec<&[u8]>, &[u8])> {
    let (argc, rest) = record.split_first_chunk::<4>()?;
    let argc = usize::try_from(i32::from_ne_bytes(*argc)).ok()?;
    let (_path, mut rest) = split_string(rest)?;
    rest = &rest[rest.iter().take_while(|&&byte| byte == 0).count()..];
    // argc comes from the record: no room is reserved for more than a few.
    let mut arguments = Vec::with_capacity(argc.min(16));
    for _ in 0..argc {
        let (argument, after) = split_string(rest)?;
        arguments.push(argument);
        rest = after;
    }
    Some((arguments, rest))
}

/// The first NUL-terminated string of `bytes`, without its NUL, and what follows it.
fn split_string(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = bytes.iter().position(|&byte| byte == 0)?;
    Some((&bytes[..end], &bytes[end + 1..]))
}

fn find_variable(strings: &[u8], name: &[u8]) -> MarkerSeen {
    for entry in strings.split_inclusive(|&byte| byte == 0) {
        let (text, whole) = match entry.strip_suffix(&[0]) {
            Some(text) => (text, true),
            None => (entry, false),
        };
        let Some(value) = text
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(b"="))
        else {
            continue;
        };
        if !whole {
            // The record's last string, cut before its NUL: the value may be cut too.
            return MarkerSeen::Unreadable;
        }
        return MarkerSeen::Value(String::from_utf8_lossy(value).into_owned());
    }
    MarkerSeen::Absent
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as the kernel lays it out, for a 64-bit process.
    fn record(path: &str, args: &[&str], env: &[&str], apple: &[&str]) -> Vec<u8> {
        let argc = i32::try_from(args.len()).expect("few arguments");
        let mut bytes = argc.to_ne_bytes().to_vec();
        // The kernel stores "executable_path=" (16 bytes, stripped on read) before the path, and
        // pads the pair with NULs to a multiple of 8; then again after the environment.
        bytes.extend_from_slice(path.as_bytes());
        bytes.push(0);
        pad_to_8(&mut bytes);
        for string in args.iter().chain(env) {
            bytes.extend_from_slice(string.as_bytes());
            bytes.push(0);
        }
        pad_to_8(&mut bytes);
        for string in apple {
            bytes.extend_from_slice(string.as_bytes());
            bytes.push(0);
        }
        bytes
    }

    /// Pads the strings (all but the 4-byte argc) to a multiple of 8.
    fn pad_to_8(bytes: &mut Vec<u8>) {
        let strings = bytes.len() - 4;
        bytes.resize(bytes.len() + (8 - strings % 8) % 8, 0);
    }

    /// The record the kernel returns when it withholds the environment: cut after the
    /// arguments.
    fn withheld(path: &str, args: &[&str]) -> Vec<u8> {
        let mut bytes = record(path, args, &[], &[]);
        while bytes.ends_with(&[0, 0]) {
            bytes.pop();
        }
        bytes
    }

    const APPLE: &[&str] = &["stack_guard=0x1", "malloc_entropy=0x2,0x3", "ptr_munge=0x4"];

    #[test]
    fn finds_a_variable_of_the_environment() {
        let bytes = record(
            "/bin/sleep",
            &["sleep", "10"],
            &["HOME=/Users/a", "CAM_RUN_ID=abc-1", "PATH=/bin"],
            APPLE,
        );
        assert_eq!(
            parse_procargs2(&bytes, "CAM_RUN_ID"),
            MarkerSeen::Value("abc-1".into())
        );
        assert_eq!(
            parse_procargs2(&bytes, "HOME"),
            MarkerSeen::Value("/Users/a".into())
        );
    }

    #[test]
    fn a_missing_variable_is_absent() {
        let bytes = record("/bin/sleep", &["sleep", "10"], &["HOME=/Users/a"], APPLE);
        assert_eq!(parse_procargs2(&bytes, "CAM_RUN_ID"), MarkerSeen::Absent);
    }

    #[test]
    fn an_argument_that_looks_like_the_variable_is_not_taken_for_it() {
        let bytes = record(
            "/usr/bin/env",
            &["env", "CAM_RUN_ID=fake", "sleep"],
            &["HOME=/Users/a"],
            APPLE,
        );
        assert_eq!(parse_procargs2(&bytes, "CAM_RUN_ID"), MarkerSeen::Absent);
    }

    #[test]
    fn a_longer_name_with_the_same_start_does_not_match() {
        let bytes = record(
            "/bin/sh",
            &["sh"],
            &["CAM_RUN_ID_OLD=x", "CAM_RUN=y"],
            APPLE,
        );
        assert_eq!(parse_procargs2(&bytes, "CAM_RUN_ID"), MarkerSeen::Absent);
    }

    #[test]
    fn the_first_entry_of_a_name_wins_and_an_empty_value_is_a_value() {
        let bytes = record("/bin/sh", &["sh"], &["A=", "A=second"], APPLE);
        assert_eq!(
            parse_procargs2(&bytes, "A"),
            MarkerSeen::Value(String::new())
        );
    }

    #[test]
    fn the_environment_wins_over_the_kernels_strings() {
        let bytes = record("/bin/sh", &["sh"], &["ptr_munge=mine"], APPLE);
        assert_eq!(
            parse_procargs2(&bytes, "ptr_munge"),
            MarkerSeen::Value("mine".into())
        );
    }

    #[test]
    fn padding_of_every_length_after_the_path_is_skipped() {
        for path in ["/a", "/ab", "/abc", "/abcdefg", "/abcdefgh", "/abcdefghi"] {
            let bytes = record(path, &["x", "y"], &["K=v"], APPLE);
            assert_eq!(
                parse_procargs2(&bytes, "K"),
                MarkerSeen::Value("v".into()),
                "{path}"
            );
        }
    }

    #[test]
    fn an_empty_environment_is_read_as_absent() {
        let bytes = record("/bin/sh", &["sh", "-c", "true"], &[], APPLE);
        assert_eq!(parse_procargs2(&bytes, "CAM_RUN_ID"), MarkerSeen::Absent);
    }

    #[test]
    fn a_withheld_environment_is_unreadable() {
        let bytes = withheld("/bin/sh", &["sh", "-c", "true"]);
        assert!(bytes.ends_with(b"true\0"));
        assert_eq!(
            parse_procargs2(&bytes, "CAM_RUN_ID"),
            MarkerSeen::Unreadable
        );
    }

    #[test]
    fn a_cut_record_is_unreadable() {
        let bytes = record("/bin/sh", &["sh", "-c", "true"], &["K=v"], APPLE);
        assert_eq!(parse_procargs2(&bytes[..2], "K"), MarkerSeen::Unreadable);
        assert_eq!(parse_procargs2(&bytes[..12], "K"), MarkerSeen::Unreadable);
        let mut cut_in_value = record("/bin/sh", &["sh"], &["K=value"], &[]);
        while cut_in_value.last() == Some(&0) {
            cut_in_value.pop();
        }
        cut_in_value.truncate(cut_in_value.len() - 2);
        assert!(cut_in_value.ends_with(b"K=val"));
        assert_eq!(parse_procargs2(&cut_in_value, "K"), MarkerSeen::Unreadable);
    }

    #[test]
    fn a_negative_or_overlong_argc_is_unreadable() {
        let mut bytes = record("/bin/sh", &["sh"], &["K=v"], APPLE);
        bytes[..4].copy_from_slice(&(-1_i32).to_ne_bytes());
        assert_eq!(parse_procargs2(&bytes, "K"), MarkerSeen::Unreadable);
        bytes[..4].copy_from_slice(&1000_i32.to_ne_bytes());
        assert_eq!(parse_procargs2(&bytes, "K"), MarkerSeen::Unreadable);
    }

    #[test]
    fn names_that_no_variable_can_have_are_absent() {
        let bytes = record("/bin/sh", &["sh"], &["K=v"], APPLE);
        assert_eq!(parse_procargs2(&bytes, ""), MarkerSeen::Absent);
        assert_eq!(parse_procargs2(&bytes, "K=v"), MarkerSeen::Absent);
        assert_eq!(parse_procargs2(&bytes, "K\0"), MarkerSeen::Absent);
    }

    #[test]
    fn the_arguments_come_back_in_order_without_the_path_or_the_environment() {
        for path in ["/a", "/abcdefg", "/abcdefgh"] {
            let bytes = record(path, &["sleep", "", "10"], &["K=v"], APPLE);
            assert_eq!(
                parse_arguments(&bytes),
                Some(vec!["sleep".into(), String::new(), "10".into()]),
                "{path}"
            );
        }
        let withheld = withheld("/bin/sh", &["sh", "-c", "true"]);
        assert_eq!(
            parse_arguments(&withheld),
            Some(vec!["sh".into(), "-c".into(), "true".into()])
        );
    }

    #[test]
    fn a_record_cut_in_its_arguments_has_none() {
        let bytes = record("/bin/sh", &["sh", "-c", "true"], &[], &[]);
        let end = bytes
            .windows(4)
            .position(|window| window == b"true")
            .expect("the last argument");
        assert_eq!(parse_arguments(&bytes[..end + 2]), None);
        assert_eq!(parse_arguments(&bytes[..3]), None);
    }

    #[test]
    fn invalid_utf8_in_a_value_is_replaced() {
        let mut bytes = record("/bin/sh", &["sh"], &["K=x"], APPLE);
        let at = bytes
            .windows(3)
            .position(|window| window == b"K=x")
            .expect("the variable");
        bytes[at + 2] = 0xff;
        assert_eq!(
            parse_procargs2(&bytes, "K"),
            MarkerSeen::Value("\u{fffd}".into())
        );
    }
}
