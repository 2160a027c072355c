//! A process's command line and environment, read from its PEB (process environment block).
//!
//! Windows 8.1 and later answer `NtQueryInformationProcess(ProcessCommandLineInformation)`,
//! but Wine 8 does not implement it, and there is no call at all for another process's
//! environment: both are read where the process keeps them, in its
//! `RTL_USER_PROCESS_PARAMETERS`, found through its PEB. The offsets are those of 64-bit
//! Windows, stable since XP x64 and the same under Wine.

use std::ffi::c_void;
use std::os::windows::io::AsRawHandle;

use windows_sys::Wdk::System::Threading::{NtQueryInformationProcess, ProcessBasicInformation};
use windows_sys::Win32::System::Diagnostics::Debug::ReadProcessMemory;
use windows_sys::Win32::System::Threading::{
    PROCESS_BASIC_INFORMATION, PROCESS_QUERY_INFORMATION, PROCESS_VM_READ,
};

use super::figures::open_process;

/// Where the PEB points to the process parameters.
const PEB_PROCESS_PARAMETERS: usize = 0x20;
/// Where the parameters keep the command line (a UNICODE_STRING).
const PARAMETERS_COMMAND_LINE: usize = 0x70;
/// Where the parameters point to the environment block.
const PARAMETERS_ENVIRONMENT: usize = 0x80;
/// The most of an environment block read (Windows caps one at 32767 characters per variable,
/// the block itself has no cap; a run's is a few KiB).
const MOST_ENVIRONMENT: usize = 1 << 20;
/// A read of the environment never crosses a page it may not own.
const PAGE: usize = 4096;

/// An open process whose memory we read.
struct Reader {
    process: std::os::windows::io::OwnedHandle,
}

impl Reader {
    fn open(pid: u32) -> Option<Self> {
        let process = open_process(pid, PROCESS_QUERY_INFORMATION | PROCESS_VM_READ)?;
        Some(Self { process })
    }

    /// Exactly `buffer.len()` bytes at `address`, or `None`.
    fn read(&self, address: usize, buffer: &mut [u8]) -> Option<()> {
        let mut got = 0usize;
        // SAFETY: the handle is open for reading memory; the buffer is live and its length
        // is what may be written.
        let done = unsafe {
            ReadProcessMemory(
                self.process.as_raw_handle(),
                address as *const c_void,
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                &mut got,
            )
        };
        (done != 0 && got == buffer.len()).then_some(())
    }

    fn read_usize(&self, address: usize) -> Option<usize> {
        let mut bytes = [0u8; size_of::<usize>()];
        self.read(address, &mut bytes)?;
        Some(usize::from_le_bytes(bytes))
    }

    /// The address of the process parameters.
    fn parameters(&self) -> Option<usize> {
        let mut basic = PROCESS_BASIC_INFORMATION {
            ExitStatus: 0,
            PebBaseAddress: std::ptr::null_mut(),
            AffinityMask: 0,
            BasePriority: 0,
            UniqueProcessId: 0,
            InheritedFromUniqueProcessId: 0,
        };
        let size = u32::try_from(size_of_val(&basic)).ok()?;
        // SAFETY: the struct is this class's and `size` its size; the handle may query.
        let status = unsafe {
            NtQueryInformationProcess(
                self.process.as_raw_handle(),
                ProcessBasicInformation,
                std::ptr::from_mut(&mut basic).cast(),
                size,
                std::ptr::null_mut(),
            )
        };
        if status < 0 || basic.PebBaseAddress.is_null() {
            return None;
        }
        self.read_usize(basic.PebBaseAddress as usize + PEB_PROCESS_PARAMETERS)
            .filter(|&address| address != 0)
    }

    /// UTF-16 units from `address` until two NULs in a row (the end of an environment block),
    /// read page by page so a block at the end of its memory region is still read.
    fn read_block(&self, mut address: usize) -> Option<Vec<u16>> {
        let mut units: Vec<u16> = Vec::new();
        while units.len() * 2 < MOST_ENVIRONMENT {
            let mut chunk = vec![0u8; PAGE - address % PAGE];
            self.read(address, &mut chunk)?;
            address += chunk.len();
            units.extend(
                chunk
                    .chunks_exact(2)
                    .map(|pair| u16::from_le_bytes([pair[0], pair[1]])),
            );
            if let Some(end) = units.windows(2).position(|pair| pair == [0, 0]) {
                units.truncate(end);
                return Some(units);
            }
        }
        None
    }
}

/// The command line of `pid`, as it was given to it. `None` when it is gone or not ours.
pub fn command_line(pid: u32) -> Option<Vec<u16>> {
    let reader = Reader::open(pid)?;
    let parameters = reader.parameters()?;
    // UNICODE_STRING: the length in bytes (u16), the capacity (u16), padding, the buffer.
    let mut header = [0u8; 16];
    reader.read(parameters + PARAMETERS_COMMAND_LINE, &mut header)?;
    let length = usize::from(u16::from_le_bytes([header[0], header[1]]));
    let buffer = usize::from_le_bytes(header[8..16].try_into().ok()?);
    let mut bytes = vec![0u8; length];
    reader.read(buffer, &mut bytes)?;
    Some(
        bytes
            .chunks_exact(2)
            .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
            .collect(),
    )
}

/// The environment block of `pid`: `NAME=value` entries, NUL-separated. `None` when it is
/// gone or not ours.
pub fn environment(pid: u32) -> Option<Vec<u16>> {
    let reader = Reader::open(pid)?;
    let parameters = reader.parameters()?;
    let block = reader.read_usize(parameters + PARAMETERS_ENVIRONMENT)?;
    if block == 0 {
        return None;
    }
    reader.read_block(block)
}
