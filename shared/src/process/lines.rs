//! Reading stdout line by line with no silent loss: lines of any length up to a cap arrive
//! whole, and a longer line is reported, never dropped or split.
//!
//! Reading and splitting are separate steps: [`LineReader::fill`] waits for more bytes (and is
//! cancel-safe, so it can sit in a `select!`), then [`LineReader::next_line`] hands out every
//! complete line already read, without waiting. [`LineReader::fill_now`] takes what the pipe
//! holds this instant without the async runtime, for a drain that must not wait on it.
//! [`LineReader::fill_paced`] reads a busy pipe in batches (see [`Pacing`]).

use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
#[cfg(unix)]
use std::time::{Duration, Instant};

#[cfg(unix)]
use nix::errno::Errno;
#[cfg(unix)]
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use tokio::io::{AsyncRead, AsyncReadExt};

#[cfg(unix)]
use super::pipe::Pipe;

/// One line of output.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// The line's bytes, without the newline.
    Complete(&'a [u8]),
    /// A line longer than the cap; its bytes were discarded.
    TooLong {
        /// How long it was, in bytes.
        bytes: usize,
    },
}

/// Splits a pipe's bytes into lines, each at most `max_bytes`: a longer line is counted and
/// discarded, never held whole.
pub struct LineReader<R> {
    inner: R,
    /// Bytes read; `buf[start..]` are not yet handed out.
    buf: Vec<u8>,
    start: usize,
    /// How many bytes from `start` are known to hold no newline.
    scanned: usize,
    /// Bytes of an over-long line thrown away so far; 0 when not inside one.
    discarded: usize,
    eof: bool,
    max_bytes: usize,
    #[cfg(unix)]
    pacing: Pacing,
}

/// Room made for each read.
const READ_SIZE: usize = 64 * 1024;
/// Buffer capacity kept between lines; a larger one left by a huge line is given back.
const KEPT_CAPACITY: usize = 1 << 20;

impl<R> LineReader<R> {
    /// A reader of `inner`'s lines, at most `max_bytes` each.
    pub fn new(inner: R, max_bytes: usize) -> Self {
        Self {
            inner,
            buf: Vec::with_capacity(READ_SIZE),
            start: 0,
            scanned: 0,
            discarded: 0,
            eof: false,
            max_bytes,
            #[cfg(unix)]
            pacing: Pacing::default(),
        }
    }

    /// Whether the output ended and every line of it was handed out.
    pub fn is_done(&self) -> bool {
        self.eof && self.start == self.buf.len() && self.discarded == 0
    }

    /// Bytes read that no complete line has handed out yet.
    pub fn pending_bytes(&self) -> usize {
        self.buf.len() - self.start + self.discarded
    }

    /// The next complete line already read, or, once the output ended, its last line without
    /// a newline. `None` when more bytes are needed.
    pub fn next_line(&mut self) -> Option<Line<'_>> {
        let pending = self.buf.len() - self.start;
        let newline = memchr::memchr(b'\n', &self.buf[self.start + self.scanned..])
            .map(|at| self.start + self.scanned + at);
        let end = match newline {
            Some(end) => end,
            None if self.eof && (pending > 0 || self.discarded > 0) => self.buf.len(),
            None => {
                self.scanned = pending;
                if self.discarded > 0 || pending > self.max_bytes {
                    // Inside an over-long line: count its bytes and keep none of them.
                    self.discarded += pending;
                    self.buf.truncate(self.start);
                    self.scanned = 0;
                }
                return None;
            }
        };
        let begin = self.start;
        self.start = (end + 1).min(self.buf.len());
        self.scanned = 0;
        let bytes = self.discarded + (end - begin);
        if self.discarded > 0 || bytes > self.max_bytes {
            self.discarded = 0;
            return Some(Line::TooLong { bytes });
        }
        let line = &self.buf[begin..end];
        Some(Line::Complete(line.strip_suffix(b"\r").unwrap_or(line)))
    }

    /// Drop the bytes already handed out and make room for one more read.
    fn make_room(&mut self) {
        make_room(&mut self.buf, &mut self.start);
    }
}

/// Drop `buf[..start]`, the bytes already handed out, and make room for one more read.
fn make_room(buf: &mut Vec<u8>, start: &mut usize) {
    if *start > 0 {
        buf.drain(..*start);
        *start = 0;
    }
    if buf.capacity() > KEPT_CAPACITY && buf.len() < READ_SIZE {
        buf.shrink_to(2 * READ_SIZE);
    }
    buf.reserve(READ_SIZE);
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Wait for more output; returns how many bytes came, 0 at its end. Cancel-safe.
    pub async fn fill(&mut self) -> io::Result<usize> {
        self.make_room();
        let read = self.inner.read_buf(&mut self.buf).await;
        if matches!(read, Ok(0) | Err(_)) {
            self.eof = true;
        }
        read
    }
}

#[cfg(unix)]
/// How long a reader that keeps up with a busy writer waits before its next read, so that one
/// wake-up takes many lines rather than one.
const BATCH_WAIT: Duration = Duration::from_millis(1);
#[cfg(unix)]
/// Reads closer together than this mean a busy writer: a read after a wait comes one
/// `BATCH_WAIT` after the one before, so batching goes on while the writer does.
const BUSY_GAP: Duration = Duration::from_millis(2);
#[cfg(unix)]
/// A writer giving at least this much per `BATCH_WAIT` fills a pipe during a wait.
const FAST_BYTES: u128 = 4096;
#[cfg(unix)]
/// A read this large means the reader is behind: it reads again at once, as waiting would
/// only delay it.
const BEHIND_BYTES: usize = 64 * 1024;
#[cfg(unix)]
/// The pipe size asked for once the writer proves fast: room for what it writes during a
/// wait (the default 64 KiB would make it block). Only fast pipes ask, so that many quiet
/// runs do not use up the user's pipe allowance (`/proc/sys/fs/pipe-user-pages-soft`).
const BUSY_PIPE_BYTES: i32 = 1 << 20;

#[cfg(unix)]
/// When to read: at once while reads are sparse or the reader is behind; after a short wait
/// while they come often. A CLI flushes every event, so a reader that keeps up wakes once per
/// line, and a wake-up costs more than parsing the line; how often the reads come, not how
/// much each takes, tells a writer that keeps it waking.
#[derive(Default)]
struct Pacing {
    batching: bool,
    grown: bool,
    last_read: Option<Instant>,
}

#[cfg(unix)]
impl Pacing {
    /// Note a read of `bytes` made `now`; true when the pipe should grow now.
    fn note(&mut self, bytes: usize, now: Instant) -> bool {
        let since = self.last_read.map_or(Duration::MAX, |at| now - at);
        self.last_read = Some(now);
        let fast = bytes as u128 * BATCH_WAIT.as_micros() >= FAST_BYTES * since.as_micros();
        self.batching = since < BUSY_GAP && bytes > 0 && bytes < BEHIND_BYTES;
        fast && bytes > 0 && !std::mem::replace(&mut self.grown, true)
    }
}

#[cfg(unix)]
impl LineReader<Pipe> {
    /// Wait for more output, after a short wait while the writer is busy (see `Pacing`);
    /// returns how many bytes came, 0 at its end. During that wait the pipe is not watched,
    /// so the writes that fill it wake nobody. Cancel-safe: nothing is read during a wait.
    pub async fn fill_paced(&mut self) -> io::Result<usize> {
        let mut read = Err(io::ErrorKind::WouldBlock.into());
        if self.pacing.batching {
            self.inner.unwatch();
            tokio::time::sleep(BATCH_WAIT).await;
            // Take all that piled up, not one buffer of it.
            read = self.read_now(BUSY_PIPE_BYTES as usize);
        }
        if read
            .as_ref()
            .is_err_and(|error| error.kind() == io::ErrorKind::WouldBlock)
        {
            let Self {
                inner,
                buf,
                start,
                eof,
                ..
            } = self;
            read = inner
                .read_when_ready(|fd| read_now(fd, buf, start, eof, BEHIND_BYTES))
                .await;
        }
        if read.is_err() {
            self.eof = true;
        }
        if let Ok(bytes) = read
            && self.pacing.note(bytes, Instant::now())
            && let Err(error) = crate::platform::widen_pipe(self.inner.as_fd(), BUSY_PIPE_BYTES)
        {
            // The default size still works, with more wake-ups.
            tracing::debug!(%error, "could not enlarge a busy pipe");
        }
        read
    }

    /// Read what the pipe holds now, up to about `limit` bytes, without waiting and without
    /// the async runtime (whose readiness news may lag behind a busy machine). Returns the
    /// bytes read; the output may have ended (see [`LineReader::is_done`]).
    pub fn fill_now(&mut self, limit: usize) -> io::Result<usize> {
        match self.read_now(limit) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => Ok(0),
            read => read,
        }
    }

    fn read_now(&mut self, limit: usize) -> io::Result<usize> {
        let fd = self.inner.as_fd();
        read_now(fd, &mut self.buf, &mut self.start, &mut self.eof, limit)
    }
}

#[cfg(unix)]
/// Read what `fd` (non-blocking) holds now into `buf`, making room as it goes, up to about
/// `limit` bytes; `WouldBlock` when it held nothing. Sets `eof` at the end of the output.
fn read_now(
    fd: BorrowedFd<'_>,
    buf: &mut Vec<u8>,
    start: &mut usize,
    eof: &mut bool,
    limit: usize,
) -> io::Result<usize> {
    let mut total = 0;
    while total < limit && !*eof {
        make_room(buf, start);
        let spare = buf.spare_capacity_mut();
        // SAFETY: read(2) writes at most `spare.len()` bytes, into the buffer's spare capacity.
        let got =
            unsafe { nix::libc::read(fd.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
        match usize::try_from(got) {
            Ok(0) => *eof = true,
            Ok(n) => {
                // SAFETY: read(2) initialised these `n` bytes of the spare capacity.
                unsafe { buf.set_len(buf.len() + n) };
                total += n;
            }
            Err(_) => match Errno::last() {
                Errno::EINTR => {}
                Errno::EAGAIN if total > 0 => break,
                errno => return Err(errno.into()),
            },
        }
    }
    Ok(total)
}

#[cfg(unix)]
/// One read of `fd` that never blocks: `Some(0)` at the end of output, `None` when nothing
/// is there to read now.
pub(super) fn read_ready(fd: impl AsFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    let fd = fd.as_fd();
    let flags = OFlag::from_bits_retain(fcntl(fd, FcntlArg::F_GETFL)?);
    if !flags.contains(OFlag::O_NONBLOCK) {
        fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    }
    loop {
        match nix::unistd::read(fd, buf) {
            Ok(n) => return Ok(Some(n)),
            Err(Errno::EAGAIN) => return Ok(None),
            Err(Errno::EINTR) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn owned(line: Line<'_>) -> Result<Vec<u8>, usize> {
        match line {
            Line::Complete(bytes) => Ok(bytes.to_vec()),
            Line::TooLong { bytes } => Err(bytes),
        }
    }

    async fn read_all(input: &[u8], max: usize) -> Vec<Result<Vec<u8>, usize>> {
        let mut reader = LineReader::new(input, max);
        let mut lines = Vec::new();
        while !reader.is_done() {
            reader.fill().await.unwrap();
            while let Some(line) = reader.next_line() {
                lines.push(owned(line));
            }
        }
        lines
    }

    /// A writer flushing line after line, as fast as it can, makes the reader batch (and grow
    /// the pipe); every line still arrives whole and in order. (Whether it batched depends on
    /// timing, so it is not asserted: the stream bench shows the effect.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_busy_writer_is_read_in_batches_without_losing_a_line() {
        use std::io::Write;
        const LINES: usize = 50_000;
        let (receiver, sender) = nix::unistd::pipe().unwrap();
        let mut sender = std::fs::File::from(sender);
        let writer = std::thread::spawn(move || {
            for n in 0..LINES {
                sender.write_all(format!("line {n}\n").as_bytes()).unwrap();
            }
        });
        let mut reader = LineReader::new(Pipe::new(receiver).unwrap(), 1024);
        let mut next = 0;
        while !reader.is_done() {
            reader.fill_paced().await.unwrap();
            while let Some(line) = reader.next_line() {
                assert_eq!(owned(line), Ok(format!("line {next}").into_bytes()));
                next += 1;
            }
        }
        writer.join().unwrap();
        assert_eq!(next, LINES);
    }

    #[test]
    fn reads_that_come_often_are_batched_and_sparse_or_large_ones_are_not() {
        let start = Instant::now();
        let at = |micros: u64| start + Duration::from_micros(micros);
        let mut pacing = Pacing::default();
        pacing.note(100, at(0));
        assert!(!pacing.batching, "the first read");
        pacing.note(100, at(50));
        assert!(
            pacing.batching,
            "a line 50 µs after the last (a writer of 20000 a second)"
        );
        pacing.note(5000, at(1100));
        assert!(pacing.batching, "a read one wait later");
        pacing.note(100, at(50_000));
        assert!(!pacing.batching, "a read after a pause");
        pacing.note(BEHIND_BYTES, at(50_100));
        assert!(
            !pacing.batching,
            "a reader that is behind reads again at once"
        );
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
    async fn a_line_over_the_cap_within_one_read_is_reported_too() {
        let lines = read_all(b"0123456789ab\nok\n", 10).await;
        assert_eq!(lines, vec![Err(12), Ok(b"ok".to_vec())]);
    }

    #[tokio::test]
    async fn last_line_without_newline_and_crlf_are_read() {
        let lines = read_all(b"a\r\n\nb", 10).await;
        assert_eq!(
            lines,
            vec![Ok(b"a".to_vec()), Ok(Vec::new()), Ok(b"b".to_vec())]
        );
    }

    #[test]
    fn fill_now_takes_what_a_pipe_holds_and_sees_its_end_once_the_writer_is_gone() {
        let (read_end, write_end) = nix::unistd::pipe().unwrap();
        let mut reader = LineReader::new(Pipe::new(read_end).unwrap(), 1024);
        nix::unistd::write(&write_end, b"one\ntw").unwrap();
        assert_eq!(reader.fill_now(usize::MAX).unwrap(), 6);
        assert_eq!(reader.next_line().map(owned), Some(Ok(b"one".to_vec())));
        assert_eq!(reader.next_line(), None);
        assert!(!reader.is_done(), "the writer is still there");
        nix::unistd::write(&write_end, b"o").unwrap();
        drop(write_end);
        reader.fill_now(usize::MAX).unwrap();
        assert_eq!(reader.next_line().map(owned), Some(Ok(b"two".to_vec())));
        assert!(reader.is_done());
    }
}
