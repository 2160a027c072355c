//! Reading stderr into a bounded buffer, so a chatty CLI never blocks on a full pipe and the
//! end of what it said is kept for error messages.

use std::collections::VecDeque;
#[cfg(unix)]
use std::os::fd::AsFd;

use tokio::io::{AsyncRead, AsyncReadExt};

#[cfg(unix)]
use super::lines::read_ready;

/// A CLI's stderr pipe and the last bytes read from it.
pub struct StderrTail<R> {
    inner: R,
    open: bool,
    chunk: Box<[u8]>,
    bytes: VecDeque<u8>,
    capacity: usize,
}

/// Lines of the tail quoted in outcomes.
const QUOTED_LINES: usize = 20;
const CHUNK: usize = 16 * 1024;

impl<R> StderrTail<R> {
    /// A reader of `inner` that keeps its last `capacity` bytes.
    pub fn new(inner: R, capacity: usize) -> Self {
        Self {
            inner,
            open: true,
            chunk: vec![0; CHUNK].into_boxed_slice(),
            bytes: VecDeque::with_capacity(capacity.min(CHUNK)),
            capacity,
        }
    }

    /// Whether the pipe may still have something to say.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Keep one read of `read` bytes (0 or an error: the end).
    fn keep(&mut self, read: std::io::Result<usize>) {
        let Ok(read @ 1..) = read else {
            self.open = false;
            return;
        };
        let chunk = &self.chunk[..read];
        let keep = read.min(self.capacity);
        let overflow = (self.bytes.len() + keep).saturating_sub(self.capacity);
        self.bytes.drain(..overflow);
        self.bytes.extend(&chunk[read - keep..]);
    }

    /// The last lines written, as text.
    pub fn text(&self) -> String {
        let (front, back) = self.bytes.as_slices();
        let bytes = [front, back].concat();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.trim_end().lines().collect();
        lines[lines.len().saturating_sub(QUOTED_LINES)..].join("\n")
    }
}

impl<R: AsyncRead + Unpin> StderrTail<R> {
    /// Wait for the next bytes and keep them. Cancel-safe.
    pub async fn read(&mut self) {
        let read = self.inner.read(&mut self.chunk).await;
        self.keep(read);
    }
}

#[cfg(unix)]
impl<R: AsFd> StderrTail<R> {
    /// Keep what the pipe holds now, up to about `limit` bytes, without waiting.
    pub fn read_now(&mut self, limit: usize) {
        let mut total = 0;
        while self.open && total < limit {
            match read_ready(&self.inner, &mut self.chunk) {
                Ok(Some(read)) => {
                    total += read;
                    self.keep(Ok(read));
                }
                Ok(None) => return,
                Err(error) => self.keep(Err(error)),
            }
        }
    }
}

#[cfg(windows)]
impl<R> StderrTail<R> {
    /// Keep what the pipe holds now without waiting: nothing on Windows, where tokio's child
    /// pipes have no read that cannot wait (see `pipe_windows`); the async reads keep the rest.
    pub fn read_now(&mut self, _limit: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_only_the_end_of_a_flood() {
        let mut flood = Vec::new();
        for i in 0..10_000 {
            flood.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        let mut tail = StderrTail::new(flood.as_slice(), 1024);
        while tail.is_open() {
            tail.read().await;
        }
        assert_eq!(tail.bytes.len(), 1024);
        assert!(tail.text().ends_with("line 9999"));
        assert_eq!(tail.text().lines().count(), QUOTED_LINES);
    }
}
