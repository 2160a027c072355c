//! The launcher's pipe: the server's end of a pipe whose other end only the process that
//! started it holds.
//!
//! A host may start the server through a launcher (the npm package's `bin/cli-agent-mcp.js`
//! where Node.js cannot exec) and then SIGKILL the launcher, which can pass nothing on. Such a
//! launcher gives the server the read end of a pipe or socket and names its descriptor in
//! `CAM_PARENT_PIPE`; when it dies, however, the kernel closes its end and the server reads
//! EOF. The server then shuts down as when its stdin closes: every run cancelled and torn
//! down, then exit.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::sys::stat::{SFlag, fstat};

use crate::mcp::{Shutdown, ShutdownCause};

/// The variable that names the descriptor.
pub const VAR: &str = "CAM_PARENT_PIPE";

/// The server's end of the launcher's pipe: open, a pipe or a socket, closed on exec.
#[derive(Debug)]
pub struct ParentPipe(OwnedFd);

#[derive(Debug, thiserror::Error)]
pub enum ParentPipeError {
    #[error(
        "{VAR}={0:?} is not a file descriptor number above 2: the launcher's pipe is not watched"
    )]
    NotADescriptor(OsString),
    #[error("{VAR}={fd}: descriptor {fd} is {what}: the launcher's pipe is not watched")]
    NotAPipe { fd: RawFd, what: String },
}

/// The pipe `CAM_PARENT_PIPE` names, if set. The variable is removed from the environment so
/// that nothing this process starts (the guardian, a CLI given `CAM_PASS_ENV=*`, a nested
/// server) takes a descriptor of its own for the launcher's; the descriptor is closed on exec.
///
/// # Safety
///
/// Call it first in `main`, before any other thread exists (it changes the environment), and
/// once (it takes ownership of the descriptor).
pub unsafe fn take() -> Result<Option<ParentPipe>, ParentPipeError> {
    let Some(value) = std::env::var_os(VAR) else {
        return Ok(None);
    };
    // SAFETY: the caller promises no other thread exists, so none reads the environment.
    unsafe { std::env::remove_var(VAR) };
    // SAFETY: the caller promises this is the only claim on the descriptor.
    unsafe { ParentPipe::from_var(&value) }.map(Some)
}

impl ParentPipe {
    /// The pipe at the descriptor `value` names.
    ///
    /// # Safety
    ///
    /// Nothing else in this process may own that descriptor.
    unsafe fn from_var(value: &std::ffi::OsStr) -> Result<Self, ParentPipeError> {
        let fd = value
            .to_str()
            .and_then(|text| text.trim().parse::<RawFd>().ok())
            .filter(|&fd| fd > 2)
            .ok_or_else(|| ParentPipeError::NotADescriptor(value.to_owned()))?;
        // SAFETY: only borrowed for the checks below; an fd that is not open fails fstat.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let not_a_pipe = |what: String| ParentPipeError::NotAPipe { fd, what };
        let stat = fstat(borrowed).map_err(|error| not_a_pipe(format!("not open ({error})")))?;
        let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
        if kind != SFlag::S_IFIFO && kind != SFlag::S_IFSOCK {
            return Err(not_a_pipe("neither a pipe nor a socket".to_owned()));
        }
        fcntl(borrowed, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))
            .map_err(|error| not_a_pipe(format!("not usable ({error})")))?;
        // SAFETY: the descriptor is open (fstat succeeded) and the caller promises no one
        // else owns it.
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Shut the server down once the launcher is gone: EOF (or an error) on its pipe. Anything
/// the launcher writes is read and ignored.
pub fn watch(pipe: ParentPipe, shutdown: Shutdown) {
    tokio::spawn(async move {
        let fd = pipe.fd();
        // A blocking read on a thread of its own, like stdin's: the exit does not wait for it.
        match tokio::task::spawn_blocking(move || read_to_end(pipe)).await {
            Ok(Ok(())) => tracing::info!(fd, "the launcher's pipe closed: the launcher is gone"),
            Ok(Err(error)) => tracing::warn!(fd, %error, "reading the launcher's pipe failed"),
            Err(error) => tracing::warn!(fd, %error, "the launcher's pipe watch failed"),
        }
        shutdown.trigger(ShutdownCause::LauncherGone);
    });
}

fn read_to_end(pipe: ParentPipe) -> io::Result<()> {
    let mut pipe = std::fs::File::from(pipe.0);
    let mut buf = [0u8; 256];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::IntoRawFd;
    use std::time::Duration;

    use super::*;

    fn shutdown() -> Shutdown {
        Shutdown::for_tests()
    }

    /// A pipe's read end, given up as a bare descriptor number as a launcher passes it.
    fn pipe_named() -> (OsString, std::fs::File) {
        let (read, write) = nix::unistd::pipe().expect("pipe");
        let number = read.into_raw_fd();
        (number.to_string().into(), std::fs::File::from(write))
    }

    #[tokio::test]
    async fn data_is_ignored_and_the_launchers_death_shuts_the_server_down() {
        let (value, mut launcher) = pipe_named();
        // SAFETY: the descriptor was given up by its owner above.
        let pipe = unsafe { ParentPipe::from_var(&value) }.expect("a pipe");
        let flags = fcntl(&pipe.0, FcntlArg::F_GETFD).expect("F_GETFD");
        assert!(FdFlag::from_bits_truncate(flags).contains(FdFlag::FD_CLOEXEC));
        let shutdown = shutdown();
        watch(pipe, shutdown.clone());
        launcher.write_all(b"anything\n").expect("write");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!shutdown.is_triggered());
        drop(launcher);
        tokio::time::timeout(Duration::from_secs(10), shutdown.triggered())
            .await
            .expect("the shutdown within 10 s");
    }

    #[test]
    fn anything_but_an_open_pipe_or_socket_is_refused() {
        for bad in ["", "x", "-1", "0", "2", "99999"] {
            // SAFETY: none of these is a descriptor anything owns (99999 is not open).
            let refused = unsafe { ParentPipe::from_var(std::ffi::OsStr::new(bad)) };
            assert!(refused.is_err(), "{bad:?} was taken");
        }
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
