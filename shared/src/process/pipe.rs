//! The read end of a CLI's stdout, watched by the runtime only while a read waits on it.
//!
//! Once a pipe has been polled, the kernel wakes its watchers on every write to it, data
//! already waiting or not. A reader that lets a busy pipe fill between batches (see
//! `lines::Pacing`) would be woken once per line for nothing if the pipe stayed registered
//! with the runtime's epoll meanwhile: so it is registered only for a wait, and taken out
//! before the reader sleeps.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// The read end of a CLI's stdout, in the runtime's epoll only while it is waited on.
pub struct Pipe {
    /// The registration while watched. Declared first, so that it is dropped (taken out of
    /// epoll) before the fd is closed.
    watched: Option<AsyncFd<RawFd>>,
    fd: OwnedFd,
}

impl Pipe {
    /// Take over `fd`, made non-blocking: reads of a pipe that is not watched must not wait.
    pub fn new(fd: OwnedFd) -> io::Result<Self> {
        let flags = OFlag::from_bits_retain(fcntl(&fd, FcntlArg::F_GETFL)?);
        fcntl(&fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
        Ok(Self { watched: None, fd })
    }

    /// Stop watching, so that writes no longer wake the runtime.
    pub fn unwatch(&mut self) {
        self.watched = None;
    }

    /// Wait until the pipe has something to read (or ended), then `read` it without blocking.
    /// `read` returns `WouldBlock` when it found nothing after all; the wait then goes on.
    pub async fn read_when_ready<T>(
        &mut self,
        mut read: impl FnMut(BorrowedFd<'_>) -> io::Result<T>,
    ) -> io::Result<T> {
        if self.watched.is_none() {
            let raw = self.fd.as_raw_fd();
            // SAFETY: `fd` stays open and unchanged while the registration lives: both are
            // private, and the registration is dropped first (see the field order).
            let watched = unsafe { AsyncFd::register_with_interest(raw, Interest::READABLE) }?;
            self.watched = Some(watched);
        }
        let (Some(watched), fd) = (&self.watched, &self.fd) else {
            return Err(io::Error::other("the pipe was not registered"));
        };
        loop {
            let mut ready = watched.readable().await?;
            if let Ok(result) = ready.try_io(|_| read(fd.as_fd())) {
                return result;
            }
        }
    }
}

impl AsFd for Pipe {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The fds that this process's epoll instances (the runtime's) watch, from /proc.
    fn watched_fds() -> Vec<RawFd> {
        let mut watched = Vec::new();
        for entry in std::fs::read_dir("/proc/self/fd")
            .expect("list /proc/self/fd")
            .flatten()
        {
            let target = std::fs::read_link(entry.path()).unwrap_or_default();
            if target.to_string_lossy() != "anon_inode:[eventpoll]" {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{name}"));
            for line in info.unwrap_or_default().lines() {
                if let Some(rest) = line.strip_prefix("tfd:") {
                    watched.extend(
                        rest.split_whitespace()
                            .next()
                            .and_then(|fd| fd.parse::<RawFd>().ok()),
                    );
                }
            }
        }
        watched
    }

    #[tokio::test]
    async fn a_pipe_is_in_epoll_only_from_a_wait_until_it_is_unwatched() {
        let (read_end, write_end) = nix::unistd::pipe().unwrap();
        let raw = read_end.as_raw_fd();
        let mut pipe = Pipe::new(read_end).unwrap();
        assert!(!watched_fds().contains(&raw), "watched before any wait");
        nix::unistd::write(&write_end, b"line\n").unwrap();
        let mut buf = [0; 16];
        let read = pipe.read_when_ready(|fd| Ok(nix::unistd::read(fd, &mut buf)?));
        assert_eq!(read.await.unwrap(), 5);
        assert!(watched_fds().contains(&raw), "not watched after a wait");
        pipe.unwatch();
        assert!(!watched_fds().contains(&raw), "still watched after unwatch");
    }
}
