//! The launcher's pipe: the server's end of a pipe whose other end only the process that
//! started it holds.
//!
//! A host may start the server through a launcher (the npm package's `bin/cli-agent-mcp.js`
//! where Node.js cannot exec) and then kill the launcher, which can pass nothing on. Such a
//! launcher gives the server the read end of a pipe and names it in `CAM_PARENT_PIPE`; when
//! it dies, however, the OS closes its end and the server reads EOF. The server then shuts
//! down as when its stdin closes: every run cancelled and torn down, then exit.
//!
//! The number is a file descriptor on Unix. On Windows it is the same number in the C
//! runtime's table of inherited handles, which Node.js (libuv) passes to a child for each
//! `stdio` entry (see [`crt_table`]): the launcher's `stdio[3]` is the server's pipe there
//! too, so the launcher is the same on every OS.

#[cfg(any(windows, test))]
mod crt_table;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use std::ffi::OsString;
use std::io::{self, Read};

#[cfg(unix)]
use self::unix as os;
#[cfg(windows)]
use self::windows as os;
use crate::mcp::{Shutdown, ShutdownCause};

/// The variable that names the descriptor.
pub const VAR: &str = "CAM_PARENT_PIPE";

/// The server's end of the launcher's pipe: open, a pipe (or a socket on Unix), not passed on
/// to what the server starts.
#[derive(Debug)]
pub struct ParentPipe {
    /// The number `CAM_PARENT_PIPE` gave, for the logs.
    number: i32,
    file: std::fs::File,
}

#[derive(Debug, thiserror::Error)]
pub enum ParentPipeError {
    #[error(
        "{VAR}={0:?} is not a file descriptor number above 2: the launcher's pipe is not watched"
    )]
    NotADescriptor(OsString),
    #[error("{VAR}={fd}: descriptor {fd} is {what}: the launcher's pipe is not watched")]
    NotAPipe { fd: i32, what: String },
}

/// The pipe `CAM_PARENT_PIPE` names, if set. The variable is removed from the environment so
/// that nothing this process starts (the guardian, a CLI given `CAM_PASS_ENV=*`, a nested
/// server) takes a descriptor of its own for the launcher's; the descriptor is not inherited.
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
        let number = value
            .to_str()
            .and_then(|text| text.trim().parse::<i32>().ok())
            .filter(|&fd| fd > 2)
            .ok_or_else(|| ParentPipeError::NotADescriptor(value.to_owned()))?;
        let not_a_pipe = |what: String| ParentPipeError::NotAPipe { fd: number, what };
        // SAFETY: the caller's promise, passed on.
        let file = unsafe { os::open(number) }.map_err(not_a_pipe)?;
        Ok(Self { number, file })
    }

    /// The number `CAM_PARENT_PIPE` gave.
    pub fn fd(&self) -> i32 {
        self.number
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

/// Reads until EOF: on Windows a pipe whose writer is gone reads as EOF too (std maps
/// `ERROR_BROKEN_PIPE` to it).
fn read_to_end(pipe: ParentPipe) -> io::Result<()> {
    let mut pipe = pipe.file;
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
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn data_is_ignored_and_the_launchers_death_shuts_the_server_down() {
        let (read, mut launcher) = std::io::pipe().expect("pipe");
        let file = std::fs::File::from(os::owned(read));
        let pipe = ParentPipe { number: 3, file };
        let shutdown = Shutdown::for_tests();
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
    fn anything_but_a_number_above_2_is_refused() {
        for bad in ["", "x", "-1", "0", "2"] {
            // SAFETY: none of these is a descriptor anything owns.
            let refused = unsafe { ParentPipe::from_var(std::ffi::OsStr::new(bad)) };
            let message = refused.expect_err(bad).to_string();
            assert!(
                message.contains("not a file descriptor number"),
                "{message}"
            );
        }
    }
}
