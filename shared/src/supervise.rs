//! Supervising one spawned CLI from start to teardown.
//!
//! "Done" is decided by the leader's exit, never by stdout EOF: a grandchild that inherited
//! stdout can hold the pipe open forever. After the exit, and after every stop, the whole
//! tree is torn down: SIGINT to the group, a grace period, SIGKILL to the group, then a sweep
//! for processes that left the group. Only then is stdout drained, briefly.

use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::dialect::{self, Dialect, LineIssue};
use crate::event::AgentEvent;
use crate::process::{self, Leader, Line, LineReader, RunMarker, SpawnedCli, StderrTail};
use crate::request::AgentKind;
use crate::transcript::{ProcessEnd, StopCause, Transcript};

/// The time limits and sizes of one run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub total: Duration,
    pub idle: Option<Duration>,
    pub grace: Duration,
    pub exit_grace: Duration,
    pub drain_grace: Duration,
    pub max_line_bytes: usize,
    pub stderr_tail_bytes: usize,
}

/// What the stdout reader reports, line by line.
enum StdoutItem {
    Events(Vec<AgentEvent>),
    Issue(LineIssue),
    InvalidUtf8,
    TooLong(usize),
}

pub type Observer<'a> = &'a mut (dyn FnMut(&AgentEvent) + Send);

/// Run the spawned CLI to its end and tear its tree down.
pub async fn supervise(
    spawned: SpawnedCli,
    marker: RunMarker,
    agent: AgentKind,
    prompt: String,
    limits: Limits,
    cancel: CancellationToken,
    observer: Observer<'_>,
) -> (Transcript, ProcessEnd) {
    let SpawnedCli {
        leader,
        stdin,
        stdout,
        stderr,
    } = spawned;
    let started = Instant::now();
    let writer = tokio::spawn(async move {
        let mut stdin = stdin;
        // A CLI that exits without reading its prompt makes this fail; its outcome says why.
        let _ = stdin.write_all(prompt.as_bytes()).await;
    });
    let tail = StderrTail::new(limits.stderr_tail_bytes);
    let stderr_pump = tokio::spawn(tail.clone().pump(stderr));
    let (items_tx, mut items) = mpsc::channel(64);
    let reader = tokio::spawn(read_stdout(
        stdout,
        dialect::for_agent(agent),
        limits.max_line_bytes,
        items_tx,
    ));

    let mut run = RunState::new(agent, limits, started, observer);
    loop {
        tokio::select! {
            () = leader.exited() => break,
            item = items.recv(), if run.stdout_open => {
                if let Some(cause) = run.take(item) {
                    run.begin_stop(&leader, cause);
                }
            }
            () = cancel.cancelled(), if run.stop.is_none() => run.begin_stop(&leader, StopCause::Cancelled),
            () = sleep_until(run.total_at), if run.stop.is_none() => {
                run.begin_stop(&leader, StopCause::TotalTimeout(limits.total));
            }
            () = until(run.idle_at), if run.stop.is_none() && run.idle_at.is_some() => {
                run.begin_stop(&leader, StopCause::IdleTimeout(limits.idle.unwrap_or_default()));
            }
            () = until(run.linger_until), if run.stop.is_none() && run.linger_until.is_some() => {
                run.begin_stop(&leader, StopCause::Lingered);
            }
            () = until(run.kill_at), if run.kill_at.is_some() => {
                leader.signal_group(Signal::SIGKILL);
                run.kill_at = None;
            }
        }
    }

    // The leader exited but is not reaped, so its group and session are still the run's:
    // kill the group, sweep up what left it, and only then reap the leader.
    let swept = process::sweep(&leader, &marker).await;
    if swept > 0 {
        tracing::debug!(%agent, swept, "killed processes the CLI left behind");
    }
    let exit = leader.reap().await;
    writer.abort();

    let drain_until = Instant::now() + limits.drain_grace;
    while run.stdout_open {
        tokio::select! {
            item = items.recv() => {
                if let Some(cause) = run.take(item) {
                    run.stop = Some(cause);
                }
            }
            () = sleep_until(drain_until) => break,
        }
    }
    reader.abort();
    let _ = tokio::time::timeout_at(drain_until, stderr_pump).await;

    let end = ProcessEnd {
        exit,
        stop: run.stop.filter(|cause| *cause != StopCause::Lingered),
        duration: started.elapsed(),
        stderr_tail: tail.text(),
    };
    (run.transcript, end)
}

/// The mutable state of the supervision loop.
struct RunState<'o> {
    transcript: Transcript,
    observer: Observer<'o>,
    limits: Limits,
    stdout_open: bool,
    stop: Option<StopCause>,
    total_at: Instant,
    idle_at: Option<Instant>,
    linger_until: Option<Instant>,
    kill_at: Option<Instant>,
}

impl<'o> RunState<'o> {
    fn new(agent: AgentKind, limits: Limits, started: Instant, observer: Observer<'o>) -> Self {
        Self {
            transcript: Transcript::new(agent),
            observer,
            limits,
            stdout_open: true,
            stop: None,
            total_at: started + limits.total,
            idle_at: limits.idle.map(|idle| started + idle),
            linger_until: None,
            kill_at: None,
        }
    }

    /// Record one item from stdout; returns a reason to stop the CLI, if it gives one.
    fn take(&mut self, item: Option<StdoutItem>) -> Option<StopCause> {
        let Some(item) = item else {
            self.stdout_open = false;
            return None;
        };
        self.idle_at = self.limits.idle.map(|idle| Instant::now() + idle);
        match item {
            StdoutItem::Events(events) => {
                for event in &events {
                    self.transcript.record(event);
                    (self.observer)(event);
                    if event.is_terminal() && self.linger_until.is_none() {
                        self.linger_until = Some(Instant::now() + self.limits.exit_grace);
                    }
                }
            }
            StdoutItem::Issue(issue) => self.transcript.record_issue(issue),
            StdoutItem::InvalidUtf8 => self.transcript.record_invalid_utf8(),
            StdoutItem::TooLong(bytes) => {
                return Some(StopCause::OutputTooLarge {
                    bytes,
                    cap: self.limits.max_line_bytes,
                });
            }
        }
        None
    }

    /// The polite first step of a teardown: SIGINT to the whole group (codex and claude stop
    /// cleanly on it; gemini only when the group gets it), then SIGKILL after the grace.
    /// A second cause while stopping only replaces the first if it is a lost line.
    fn begin_stop(&mut self, leader: &Leader, cause: StopCause) {
        if self.stop.is_some() {
            if matches!(cause, StopCause::OutputTooLarge { .. }) {
                self.stop = Some(cause);
            }
            return;
        }
        tracing::debug!(%leader, ?cause, "stopping the CLI");
        self.transcript.note_stop_requested();
        self.stop = Some(cause);
        leader.signal_group(Signal::SIGINT);
        self.kill_at = Some(Instant::now() + self.limits.grace);
    }
}

/// Sleep until `deadline`, or forever when there is none.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

async fn read_stdout(
    stdout: impl tokio::io::AsyncRead + Unpin,
    mut dialect: Box<dyn Dialect>,
    max_line_bytes: usize,
    items: mpsc::Sender<StdoutItem>,
) {
    let mut lines = LineReader::new(stdout, max_line_bytes);
    let mut events = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut sent = Vec::with_capacity(2);
        match line {
            Line::TooLong { bytes } => sent.push(StdoutItem::TooLong(bytes)),
            Line::Complete(bytes) => {
                let text = match std::str::from_utf8(bytes) {
                    Ok(text) => std::borrow::Cow::Borrowed(text),
                    Err(_) => {
                        sent.push(StdoutItem::InvalidUtf8);
                        String::from_utf8_lossy(bytes)
                    }
                };
                match dialect.parse_line(&text, &mut events) {
                    Ok(()) if events.is_empty() => {}
                    Ok(()) => sent.push(StdoutItem::Events(std::mem::take(&mut events))),
                    Err(issue) => sent.push(StdoutItem::Issue(issue)),
                }
            }
        }
        for item in sent {
            if items.send(item).await.is_err() {
                return;
            }
        }
    }
}
