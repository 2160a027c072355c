//! Draining stderr into a bounded buffer, so a chatty CLI never blocks on a full pipe and the
//! end of what it said is kept for error messages.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};

#[derive(Clone)]
pub struct StderrTail {
    inner: Arc<Mutex<Tail>>,
}

struct Tail {
    bytes: VecDeque<u8>,
    capacity: usize,
    total: u64,
}

/// Lines of the tail quoted in outcomes.
const QUOTED_LINES: usize = 20;

impl StderrTail {
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Tail {
                bytes: VecDeque::with_capacity(capacity.min(64 * 1024)),
                capacity,
                total: 0,
            })),
        }
    }

    /// Read `stderr` to its end, keeping the last bytes.
    pub async fn pump(self, mut stderr: impl AsyncRead + Unpin) {
        let mut chunk = vec![0u8; 16 * 1024];
        while let Ok(read @ 1..) = stderr.read(&mut chunk).await {
            self.push(&chunk[..read]);
        }
    }

    fn push(&self, chunk: &[u8]) {
        let mut tail = self.lock();
        tail.total += chunk.len() as u64;
        let keep = chunk.len().min(tail.capacity);
        let overflow = (tail.bytes.len() + keep).saturating_sub(tail.capacity);
        tail.bytes.drain(..overflow);
        tail.bytes.extend(&chunk[chunk.len() - keep..]);
    }

    /// The last lines written, as text.
    pub fn text(&self) -> String {
        let tail = self.lock();
        let (front, back) = tail.bytes.as_slices();
        let bytes = [front, back].concat();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.trim_end().lines().collect();
        lines[lines.len().saturating_sub(QUOTED_LINES)..].join("\n")
    }

    /// Bytes written to stderr in all.
    pub fn total_bytes(&self) -> u64 {
        self.lock().total
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tail> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_only_the_end_of_a_flood() {
        let tail = StderrTail::new(1024);
        let mut flood = Vec::new();
        for i in 0..10_000 {
            flood.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        tail.clone().pump(flood.as_slice()).await;
        assert_eq!(tail.total_bytes(), flood.len() as u64);
        assert!(tail.text().ends_with("line 9999"));
        assert_eq!(tail.text().lines().count(), QUOTED_LINES);
    }
}
