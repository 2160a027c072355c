//! The read end of a CLI's stdout on Windows: tokio's own pipe of the child, read with plain
//! async reads.
//!
//! Unix's pacing (leave a busy pipe out of epoll between batches) has no counterpart here:
//! tokio reads a child's pipe on its blocking pool, one read at a time, and there is no read
//! that cannot wait. So [`LineReader::fill_now`] takes nothing, and the drain after a run's
//! end reads with the async reads, which end since every writer died with the run's job.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::ChildStdout;

use super::lines::LineReader;

/// The read end of a CLI's stdout.
pub struct Pipe {
    stdout: ChildStdout,
}

impl Pipe {
    /// Take over the child's stdout.
    pub fn new(stdout: ChildStdout) -> Self {
        Self { stdout }
    }
}

impl AsyncRead for Pipe {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stdout).poll_read(cx, buf)
    }
}

impl LineReader<Pipe> {
    /// Wait for more output; returns how many bytes came, 0 at its end. Cancel-safe.
    pub async fn fill_paced(&mut self) -> io::Result<usize> {
        self.fill().await
    }

    /// What the pipe holds this instant, without waiting: nothing on Windows (see the module's
    /// doc); the async reads take the output to its end.
    pub fn fill_now(&mut self, _limit: usize) -> io::Result<usize> {
        Ok(0)
    }
}
