//! The launcher's pipe on Unix: a descriptor, checked to be an open pipe or socket and made
//! close-on-exec.

use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd};

use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::sys::stat::{SFlag, fstat};

/// The pipe or socket at descriptor `fd`, closed on exec; `Err` says what it is instead.
///
/// # Safety
///
/// Nothing else in this process may own that descriptor.
pub unsafe fn open(fd: i32) -> Result<std::fs::File, String> {
    // SAFETY: only borrowed for the checks below; an fd that is not open fails fstat.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let stat = fstat(borrowed).map_err(|error| format!("not open ({error})"))?;
    let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
    if kind != SFlag::S_IFIFO && kind != SFlag::S_IFSOCK {
        return Err("neither a pipe nor a socket".to_owned());
    }
    fcntl(borrowed, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))
        .map_err(|error| format!("not usable ({error})"))?;
    // SAFETY: the descriptor is open (fstat succeeded) and the caller promises no one else
    // owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) }.into())
}

/// A pipe end as the descriptor it is.
#[cfg(test)]
pub fn owned(end: impl Into<OwnedFd>) -> OwnedFd {
    end.into()
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::os::fd::{AsFd, IntoRawFd};

    use super::super::ParentPipe;
    use super::*;

    #[test]
    fn a_launchers_descriptor_is_taken_closed_on_exec() {
        let (read, _write) = std::io::pipe().expect("pipe");
        let number = OwnedFd::from(read).into_raw_fd();
        // SAFETY: the descriptor was given up by its owner above.
        let pipe = unsafe { ParentPipe::from_var(&OsString::from(number.to_string())) };
        let pipe = pipe.expect("a pipe");
        let flags = fcntl(pipe.file.as_fd(), FcntlArg::F_GETFD).expect("F_GETFD");
        assert!(FdFlag::from_bits_truncate(flags).contains(FdFlag::FD_CLOEXEC));
    }

    #[test]
    fn anything_but_an_open_pipe_or_socket_is_refused() {
        // SAFETY: 99999 is not open, so nothing owns it.
        let refused = unsafe { ParentPipe::from_var(std::ffi::OsStr::new("99999")) };
        let message = refused.expect_err("not open").to_string();
        assert!(message.contains("not open"), "{message}");
        let file = std::fs::File::open("Cargo.toml").expect("a regular file");
        let number = file.into_raw_fd();
        // SAFETY: the descriptor was given up by its owner above; refused, it is not owned.
        let refused = unsafe { ParentPipe::from_var(&OsString::from(number.to_string())) };
        let message = refused.expect_err("a regular file").to_string();
        assert!(message.contains("neither a pipe nor a socket"), "{message}");
        // SAFETY: refused above, so still ours to close.
        drop(unsafe { OwnedFd::from_raw_fd(number) });
    }
}
