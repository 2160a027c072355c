//! Reading stdout line by line with no silent loss: lines of any length up to a cap arrive
//! whole, and a longer line is reported, never dropped or split.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One line of output.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// The line's bytes, without the newline.
    Complete(&'a [u8]),
    /// A line longer than the cap; its bytes were discarded.
    TooLong { bytes: usize },
}

pub struct LineReader<R> {
    inner: BufReader<R>,
    max_bytes: usize,
    line: Vec<u8>,
}

/// Buffer capacity kept between lines; a larger one left by a huge line is given back.
const KEPT_CAPACITY: usize = 1 << 20;

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max_bytes: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(64 * 1024, inner),
            max_bytes,
            line: Vec::new(),
        }
    }

    /// The next line, or `None` at end of output. A last line without a newline counts.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Line<'_>>> {
        if self.line.capacity() > KEPT_CAPACITY {
            self.line = Vec::new();
        }
        self.line.clear();
        let mut discarded = 0usize;
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                if self.line.is_empty() && discarded == 0 {
                    return Ok(None);
                }
                break;
            }
            let (chunk, found_newline) = match memchr::memchr(b'\n', available) {
                Some(end) => (&available[..end], true),
                None => (available, false),
            };
            let used = chunk.len() + usize::from(found_newline);
            if discarded > 0 {
                discarded += chunk.len();
            } else if self.line.len() + chunk.len() > self.max_bytes {
                discarded = self.line.len() + chunk.len();
                self.line = Vec::new();
            } else {
                self.line.extend_from_slice(chunk);
            }
            self.inner.consume(used);
            if found_newline {
                break;
            }
        }
        if discarded > 0 {
            return Ok(Some(Line::TooLong { bytes: discarded }));
        }
        let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
        Ok(Some(Line::Complete(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &[u8], max: usize) -> Vec<Result<Vec<u8>, usize>> {
        let mut reader = LineReader::new(input, max);
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            lines.push(match line {
                Line::Complete(bytes) => Ok(bytes.to_vec()),
                Line::TooLong { bytes } => Err(bytes),
            });
        }
        lines
    }

    #[tokio::test]
    async fn a_line_far_larger_than_the_buffer_arrives_whole() {
        let big = vec![b'x'; 8 * 1024 * 1024];
        let mut input = big.clone();
        input.extend_from_slice(b"\nnext\n");
        let lines = read_all(&input, 64 * 1024 * 1024).await;
        assert_eq!(lines, vec![Ok(big), Ok(b"next".to_vec())]);
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_reported_with_its_size_and_the_next_line_survives() {
        let mut input = vec![b'x'; 300_000];
        input.extend_from_slice(b"\n{\"ok\":1}\n");
        let lines = read_all(&input, 100_000).await;
        assert_eq!(lines, vec![Err(300_000), Ok(b"{\"ok\":1}".to_vec())]);
    }

    #[tokio::test]
    async fn last_line_without_newline_and_crlf_are_read() {
        let lines = read_all(b"a\r\n\nb", 10).await;
        assert_eq!(
            lines,
            vec![Ok(b"a".to_vec()), Ok(Vec::new()), Ok(b"b".to_vec())]
        );
    }
}
