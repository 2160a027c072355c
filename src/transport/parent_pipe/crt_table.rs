//! The C runtime's table of inherited handles, as a parent hands it to a child in
//! `STARTUPINFO.lpReserved2`: a 32-bit count `n`, then `n` flag bytes, then `n` handles of
//! pointer width, packed. Node.js (libuv) fills it for a child's `stdio` entries, so the
//! launcher's `stdio[3]` is entry 3 here. Plain bytes in, a handle value out: tested on any OS.

/// The entry is open (the C runtime's `FOPEN`).
const OPEN: u8 = 0x01;
/// The entry is a pipe (`FPIPE`).
const PIPE: u8 = 0x08;

/// The handle of entry `fd` of `table`, when it is there, open and a pipe; `None` for a
/// table too short for what it says, or a null or invalid (`-1`) handle.
pub fn pipe_handle(table: &[u8], fd: usize) -> Option<usize> {
    let (count, rest) = table.split_first_chunk::<4>()?;
    let count = usize::try_from(u32::from_le_bytes(*count)).ok()?;
    if fd >= count {
        return None;
    }
    let flags = *rest.get(fd)?;
    let width = size_of::<usize>();
    let at = count.checked_add(fd.checked_mul(width)?)?;
    let bytes = rest.get(at..at.checked_add(width)?)?;
    let handle = usize::from_le_bytes(bytes.try_into().ok()?);
    let usable = flags & OPEN != 0 && flags & PIPE != 0 && handle != 0 && handle != usize::MAX;
    usable.then_some(handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table as libuv lays it out: stdin, stdout, stderr inherited, entry 3 a pipe.
    fn table(count: u32, flags: &[u8], handles: &[usize]) -> Vec<u8> {
        let mut table = count.to_le_bytes().to_vec();
        table.extend_from_slice(flags);
        for handle in handles {
            table.extend_from_slice(&handle.to_le_bytes());
        }
        table
    }

    #[test]
    fn the_launchers_pipe_is_read_at_its_number() {
        let four = table(4, &[0x41, 0x41, 0x41, 0x09], &[0x10, 0x14, 0x18, 0x2c4]);
        assert_eq!(pipe_handle(&four, 3), Some(0x2c4));
        // stdin here is a character device, not a pipe.
        assert_eq!(pipe_handle(&four, 0), None);
    }

    #[test]
    fn a_closed_missing_or_invalid_entry_or_a_short_table_gives_none() {
        let closed = table(4, &[1, 1, 1, 0x08], &[1, 2, 3, 0x2c4]);
        assert_eq!(pipe_handle(&closed, 3), None);
        let three = table(3, &[9, 9, 9], &[1, 2, 3]);
        assert_eq!(pipe_handle(&three, 3), None);
        let invalid = table(4, &[9, 9, 9, 9], &[1, 2, 3, usize::MAX]);
        assert_eq!(pipe_handle(&invalid, 3), None);
        let null = table(4, &[9, 9, 9, 9], &[1, 2, 3, 0]);
        assert_eq!(pipe_handle(&null, 3), None);
        let mut short = table(4, &[9, 9, 9, 9], &[1, 2, 3, 0x2c4]);
        short.pop();
        assert_eq!(pipe_handle(&short, 3), None);
        assert_eq!(pipe_handle(&[], 3), None);
        assert_eq!(pipe_handle(&table(u32::MAX, &[9], &[]), 3), None);
    }
}
