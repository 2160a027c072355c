//! The line reader under generated input: any bytes, cut into reads of any sizes, with reads
//! that are not ready, under any cap. It must give exactly the lines a plain model of its
//! contract gives (a line is what lies before `\n`, one `\r` before it dropped; a line over
//! the cap is reported with its size; a last line without `\n` counts), and never panic or
//! hang. Failures are saved in `tests/fixtures/fuzz/lines.proptest-regressions`.
//! `PROPTEST_CASES=100000 cargo test -p cli-agent-engine --release --test fuzz_lines` for a
//! long run.

use crate::fuzz;

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use cli_agent_engine::process::{Line, LineReader};
use proptest::prelude::*;
use tokio::io::{AsyncRead, ReadBuf};

/// What a reader owes for one line: its bytes, or the size of a line over the cap.
type Expected = Result<Vec<u8>, usize>;

/// The contract, stated plainly.
fn model(input: &[u8], max: usize) -> Vec<Expected> {
    let mut pieces: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if pieces.last().is_some_and(|last| last.is_empty()) {
        pieces.pop();
    }
    pieces
        .into_iter()
        .map(|raw| {
            if raw.len() > max {
                Err(raw.len())
            } else {
                Ok(raw.strip_suffix(b"\r").unwrap_or(raw).to_vec())
            }
        })
        .collect()
}

/// A reader that hands out `input` in the given read sizes, saying "not ready" (and waking at
/// once) before some reads, as a pipe does.
struct Choppy {
    input: Vec<u8>,
    at: usize,
    reads: Vec<(usize, bool)>,
    next: usize,
    stalled: bool,
}

impl AsyncRead for Choppy {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let (size, stall) = self.reads[self.next % self.reads.len()];
        if stall && !self.stalled {
            self.stalled = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.stalled = false;
        self.next += 1;
        let end = (self.at + size).min(self.input.len());
        let end = self.at + (end - self.at).min(buf.remaining());
        buf.put_slice(&self.input[self.at..end]);
        self.at = end;
        Poll::Ready(Ok(()))
    }
}

async fn read_all(reader: Choppy, max: usize) -> Vec<Expected> {
    let mut lines = LineReader::new(reader, max);
    let mut out = Vec::new();
    loop {
        while let Some(line) = lines.next_line() {
            out.push(match line {
                Line::Complete(bytes) => Ok(bytes.to_vec()),
                Line::TooLong { bytes } => Err(bytes),
            });
        }
        if lines.is_done() {
            return out;
        }
        lines.fill().await.expect("reading memory cannot fail");
    }
}

/// Bytes rich in the ones that matter: newlines, carriage returns, invalid UTF-8.
fn input() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        3 => Just(b'\n'),
        2 => Just(b'\r'),
        1 => Just(0xff),
        6 => any::<u8>(),
        8 => Just(b'x'),
    ];
    let run = (byte, 1usize..300).prop_map(|(byte, n)| vec![byte; n]);
    prop::collection::vec(
        prop_oneof![run, prop::collection::vec(any::<u8>(), 0..64)],
        0..40,
    )
    .prop_map(|runs| runs.concat())
}

fn check(input: Vec<u8>, reads: Vec<(usize, bool)>, max: usize) -> Result<(), TestCaseError> {
    let expected = model(&input, max);
    let reader = Choppy {
        input,
        at: 0,
        reads,
        next: 0,
        stalled: false,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    // A generous bound: the reader must finish, not be fast.
    let got = runtime
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(60), read_all(reader, max)).await
        })
        .map_err(|_| TestCaseError::fail("the reader hung"))?;
    prop_assert_eq!(got, expected);
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config("lines", 1000))]

    #[test]
    fn any_bytes_in_any_reads_give_the_lines_of_the_model(
        input in input(),
        reads in prop::collection::vec((1usize..5000, any::<bool>()), 1..8),
        max in prop_oneof![0usize..8, 8usize..400, Just(usize::MAX)],
    ) {
        check(input, reads, max)?;
    }
}

#[test]
fn lines_far_over_the_buffer_and_the_cap_are_reported_in_any_reads() {
    let mut input = vec![b'y'; 300 * 1024];
    input.extend_from_slice(b"\r\nok\r\n");
    input.extend(vec![b'z'; 200 * 1024]);
    for reads in [vec![(1, false)], vec![(4096, true)], vec![(1 << 20, false)]] {
        for max in [0, 64 * 1024, 300 * 1024, 300 * 1024 + 1, 1 << 20] {
            check(input.clone(), reads.clone(), max).expect("matches the model");
        }
    }
}
