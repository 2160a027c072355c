//! The fourth stage: a launched CLI supervised from start to teardown.
//!
//! "Done" is decided by the leader's exit, never by stdout EOF: a grandchild that inherited
//! stdout can hold the pipe open forever. After the exit, and after every stop, the whole
//! tree is torn down: SIGINT to the group, a grace period, SIGKILL to the group, then a sweep
//! for processes that left the group. Only then is the output drained: to its end, since
//! every writer is dead; a deadline only cuts off a pipe that an escaped process still holds.
//!
//! stdout and stderr are read in the supervising task itself, a buffer at a time, and every
//! complete line of a buffer is parsed before the next wait: no task or channel per line.

use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::ChildStderr;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::config::EngineConfig;
use crate::dialect::Dialect;
use crate::event::AgentEvent;
use crate::process::{self, Leader, Line, LineReader, Pipe, RunMarker, SpawnedCli, StderrTail};
use crate::question::PersonWait;
use crate::request::RunRequest;
use crate::sandbox::{self, Confinement};
use crate::transcript::{ProcessEnd, StopCause, Transcript};

use super::launch::{Launched, Started};

/// A run whose CLI has ended and whose whole process tree is gone: what it said and how it
/// ended.
pub(crate) struct Supervised {
    pub(super) run: Started,
    pub(super) transcript: Transcript,
    pub(super) end: ProcessEnd,
}

/// The time limits and sizes of one run.
#[derive(Clone, Debug)]
struct Limits {
    total: Duration,
    idle: Option<Duration>,
    /// Pauses the idle limit while the run waits on the person.
    person_wait: PersonWait,
    grace: Duration,
    exit_grace: Duration,
    drain_grace: Duration,
    max_line_bytes: usize,
    stderr_tail_bytes: usize,
}

impl Limits {
    /// The limits of `agent`'s run of `request`: the request's, else the agent's, else the
    /// engine's.
    fn of(config: &EngineConfig, agent: Agent, request: &RunRequest) -> Self {
        Self {
            total: config.total_limit(request),
            idle: agent.profile().idle_timeout.or(config.idle_timeout),
            person_wait: request.person_wait.clone(),
            grace: config.grace,
            exit_grace: config.exit_grace,
            drain_grace: config.drain_grace,
            max_line_bytes: config.max_line_bytes,
            stderr_tail_bytes: config.stderr_tail_bytes,
        }
    }
}

/// Sees the events as they are parsed, in order, a batch at a time: those of the lines one
/// read brought (256 at most), so that an observer takes its locks once a batch, not once an
/// event.
pub type Observer<'a> = &'a mut (dyn FnMut(&[AgentEvent]) + Send);

/// The most events handed to the observer at once: bounds what a burst holds in memory.
const OBSERVED_AT_ONCE: usize = 256;

/// How much a drain takes from a pipe at once without waiting: more than a pipe can hold
/// (`/proc/sys/fs/pipe-max-size`, 1 MiB by default), so it is all that was written.
const READ_NOW_LIMIT: usize = 4 << 20;

/// Runs a launched CLI to its end, its prompt on stdin, and tears its tree down. `cancel`
/// stops it; `observer` sees every event as it is parsed.
pub(crate) async fn supervise(
    launched: Launched,
    config: &EngineConfig,
    cancel: &CancellationToken,
    observer: Observer<'_>,
) -> Supervised {
    let Launched {
        mut run,
        cli,
        marker,
    } = launched;
    let prepared = &mut run.placed.prepared;
    let agent = prepared.agent;
    let limits = Limits::of(config, agent, &prepared.request);
    let prompt = take_prompt(agent, &mut prepared.request);
    let (mut transcript, end) = run_cli(cli, marker, agent, prompt, limits, cancel, observer).await;
    warn_of_refusals(run.confinement.as_ref(), &mut transcript);
    Supervised {
        run,
        transcript,
        end,
    }
}

/// The prompt the CLI reads, taken out of the request: an output schema the CLI takes no flag
/// for is spelled out at its end.
pub(super) fn take_prompt(agent: Agent, request: &mut RunRequest) -> String {
    let mut prompt = std::mem::take(&mut request.prompt);
    if let Some(schema) = &request.output_schema
        && agent.cli().schema_flag().is_none()
    {
        prompt.push_str(&schema.prompt_instruction());
    }
    prompt
}

/// A confined run whose tools were refused writes says what the sandbox refused.
fn warn_of_refusals(confinement: Option<&Confinement>, transcript: &mut Transcript) {
    if let Some(confinement) = confinement
        && !transcript.refused().is_empty()
    {
        let warning = confinement.refusal_warning(transcript.refused());
        transcript.warn(warning);
    }
}

/// Runs the spawned CLI to its end and tears its tree down.
async fn run_cli(
    spawned: SpawnedCli,
    marker: RunMarker,
    agent: Agent,
    prompt: String,
    limits: Limits,
    cancel: &CancellationToken,
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
    let mut output = Output {
        stdout: LineReader::new(stdout, limits.max_line_bytes),
        stderr: StderrTail::new(stderr, limits.stderr_tail_bytes),
    };
    let mut run = RunState::new(agent, limits, started, observer);
    run.watch(&leader, &mut output, cancel).await;
    let exit = tear_down_and_drain(leader, &marker, agent, writer, &mut run, &mut output).await;
    let end = ProcessEnd {
        exit,
        stop: run.stop.filter(|cause| *cause != StopCause::Lingered),
        duration: started.elapsed(),
        stderr_tail: output.stderr.text(),
    };
    (run.transcript, end)
}

/// After the leader's exit: the leader exited but is not reaped, so its group and session are
/// still the run's: kill the group, sweep up what left it, and only then reap the leader and
/// drain the output every writer of which is now dead.
async fn tear_down_and_drain(
    leader: Leader,
    marker: &RunMarker,
    agent: Agent,
    writer: JoinHandle<()>,
    run: &mut RunState<'_>,
    output: &mut Output,
) -> Option<ExitStatus> {
    let swept = process::sweep(&leader, marker).await;
    if swept > 0 {
        tracing::debug!(%agent, swept, "killed processes the CLI left behind");
    }
    let pid = leader.pid();
    let exit = leader.reap().await;
    writer.abort();
    run.drain(output, pid).await;
    exit
}

/// The CLI's stdout, split into lines, and the tail of its stderr.
struct Output {
    stdout: LineReader<Pipe>,
    stderr: StderrTail<ChildStderr>,
}

impl Output {
    fn is_open(&self) -> bool {
        !self.stdout.is_done() || self.stderr.is_open()
    }

    /// Wait until either pipe gave something (or ended). Cancel-safe.
    async fn read(&mut self) {
        tokio::select! {
            read = self.stdout.fill_paced(), if !self.stdout.is_done() => {
                if let Err(error) = read {
                    tracing::warn!(%error, "could not read the CLI's stdout; treating it as ended");
                }
            }
            () = self.stderr.read(), if self.stderr.is_open() => {}
        }
    }

    /// Take what both pipes hold now, without waiting.
    fn read_now(&mut self) {
        if let Err(error) = self.stdout.fill_now(READ_NOW_LIMIT) {
            tracing::warn!(%error, "could not read the CLI's stdout; treating it as ended");
        }
        self.stderr.read_now(READ_NOW_LIMIT);
    }
}

/// The mutable state of the supervision loop.
struct RunState<'o> {
    transcript: Transcript,
    dialect: Box<dyn Dialect>,
    /// Events parsed and not yet observed; kept to reuse its allocation.
    events: Vec<AgentEvent>,
    observer: Observer<'o>,
    limits: Limits,
    stop: Option<StopCause>,
    total_at: Instant,
    /// When the last event or unreadable line came.
    last_news: Instant,
    /// When to look at `last_news` again: the idle limit is checked lazily, so that a busy
    /// stream does not move a timer for every line.
    idle_check_at: Option<Instant>,
    linger_until: Option<Instant>,
    kill_at: Option<Instant>,
}

impl<'o> RunState<'o> {
    fn new(agent: Agent, limits: Limits, started: Instant, observer: Observer<'o>) -> Self {
        Self {
            transcript: Transcript::new(agent),
            dialect: agent.cli().dialect(),
            events: Vec::new(),
            observer,
            stop: None,
            total_at: started + limits.total,
            last_news: started,
            idle_check_at: limits.idle.map(|idle| started + idle),
            limits,
            linger_until: None,
            kill_at: None,
        }
    }

    /// Read, parse and watch the limits until the leader exits, starting a stop when a limit
    /// fires, the output breaks the line cap or `cancel` is cancelled.
    async fn watch(&mut self, leader: &Leader, output: &mut Output, cancel: &CancellationToken) {
        let cancelled = cancel.cancelled();
        tokio::pin!(cancelled);
        let timer = sleep_until(self.total_at);
        tokio::pin!(timer);
        loop {
            let deadline = self.next_deadline();
            if let Some(at) = deadline.filter(|at| *at != timer.deadline()) {
                timer.as_mut().reset(at);
            }
            tokio::select! {
                () = leader.exited() => break,
                () = output.read(), if output.is_open() => {
                    if let Some(cause) = self.take_lines(&mut output.stdout) {
                        self.begin_stop(leader, cause);
                    }
                }
                () = &mut cancelled, if self.stop.is_none() => self.begin_stop(leader, StopCause::Cancelled),
                () = &mut timer, if deadline.is_some() => self.deadline_passed(leader),
            }
        }
    }

    /// The earliest moment a limit may fire.
    fn next_deadline(&self) -> Option<Instant> {
        let limits = [self.total_at]
            .into_iter()
            .chain(self.idle_check_at)
            .chain(self.linger_until)
            .filter(|_| self.stop.is_none());
        limits.chain(self.kill_at).min()
    }

    /// Act on whichever limit has passed.
    fn deadline_passed(&mut self, leader: &Leader) {
        let now = Instant::now();
        if self.kill_at.is_some_and(|at| at <= now) {
            leader.kill();
            self.kill_at = None;
        }
        if self.stop.is_some() {
            return;
        }
        if self.total_at <= now {
            self.begin_stop(leader, StopCause::TotalTimeout(self.limits.total));
        } else if self.linger_until.is_some_and(|at| at <= now) {
            self.begin_stop(leader, StopCause::Lingered);
        } else if let Some(idle) = self.limits.idle
            && self.idle_check_at.is_some_and(|at| at <= now)
        {
            // Waiting on the person is not idleness: look again a whole limit later.
            let quiet_since = self.limits.person_wait.quiet_since(self.last_news);
            let idle_at = quiet_since.unwrap_or(now) + idle;
            if idle_at <= now {
                self.begin_stop(leader, StopCause::IdleTimeout(idle));
            } else {
                self.idle_check_at = Some(idle_at);
            }
        }
    }

    /// Take every complete line stdout has read; returns a reason to stop the CLI, if one
    /// of them gives one.
    fn take_lines(&mut self, stdout: &mut LineReader<Pipe>) -> Option<StopCause> {
        let mut cause = None;
        let mut news = false;
        while let Some(line) = stdout.next_line() {
            let bytes = match line {
                Line::Complete(bytes) => bytes,
                Line::TooLong { bytes } => {
                    news = true;
                    cause.get_or_insert(StopCause::OutputTooLarge {
                        bytes,
                        cap: self.limits.max_line_bytes,
                    });
                    continue;
                }
            };
            news |= self.take_line(bytes);
            if self.events.len() >= OBSERVED_AT_ONCE {
                self.deliver();
            }
        }
        self.deliver();
        if news {
            self.last_news = Instant::now();
        }
        cause
    }

    /// Parse one line, keeping its events for [`RunState::deliver`]; false when it said
    /// nothing (a blank line, an event the outcome does not need).
    fn take_line(&mut self, bytes: &[u8]) -> bool {
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                self.transcript.record_invalid_utf8();
                String::from_utf8_lossy(bytes)
            }
        };
        let before = self.events.len();
        if let Err(issue) = self.dialect.parse_line(&text, &mut self.events) {
            self.transcript.record_issue(issue);
            return true;
        }
        self.note_refusal(&text, before);
        self.events.len() > before || matches!(text, std::borrow::Cow::Owned(_))
    }

    /// A finished tool call on a line that tells of a refused write is noted, so the outcome
    /// can say what the sandbox refused; one the person or the server denied (a question
    /// answered no) is a warning of its own. Only tool ends are looked at: they are few.
    fn note_refusal(&mut self, line: &str, first_new: usize) {
        for event in &self.events[first_new..] {
            if !matches!(event, AgentEvent::ToolFinished { .. }) {
                continue;
            }
            if let Some(denial) = crate::question::denial_in(line) {
                self.transcript.warn(denial);
            } else if let AgentEvent::ToolFinished { name, command, .. } = event
                && sandbox::tells_of_refusal(line)
            {
                let call = command
                    .as_deref()
                    .map_or_else(|| name.clone(), |c| format!("`{c}`"));
                self.transcript.note_refused(call);
            }
        }
    }

    /// Show the events parsed so far to the observer, then fold them into the transcript.
    fn deliver(&mut self) {
        if self.events.is_empty() {
            return;
        }
        (self.observer)(&self.events);
        for event in self.events.drain(..) {
            if event.is_terminal() && self.linger_until.is_none() {
                self.linger_until = Some(Instant::now() + self.limits.exit_grace);
            }
            self.transcript.record(event);
        }
    }

    /// The polite first step of a teardown: SIGINT to the whole group (codex and claude stop
    /// cleanly on it; gemini only when the group gets it; Ctrl-Break on Windows), then the
    /// kill after the grace.
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
        leader.interrupt();
        self.kill_at = Some(Instant::now() + self.limits.grace);
    }

    /// Read what is left of the output once the run's processes are gone. Their pipes'
    /// writers died with them, so this reads to the end however late this task gets to run;
    /// only a pipe still held open by a process that escaped the run is given up on, after
    /// `drain_grace`, and not before everything it holds was taken.
    async fn drain(&mut self, output: &mut Output, leader: u32) {
        let deadline = Instant::now() + self.limits.drain_grace;
        output.read_now();
        self.take_drained(output);
        while output.is_open() {
            tokio::select! {
                () = output.read() => self.take_drained(output),
                () = sleep_until(deadline) => {
                    output.read_now();
                    self.take_drained(output);
                    if output.is_open() {
                        self.gave_up_draining(output, leader);
                    }
                    return;
                }
            }
        }
    }

    fn take_drained(&mut self, output: &mut Output) {
        if let Some(cause) = self.take_lines(&mut output.stdout) {
            self.stop = Some(cause);
        }
    }

    fn gave_up_draining(&mut self, output: &Output, leader: u32) {
        let grace = self.limits.drain_grace.as_secs_f32();
        let unfinished = output.stdout.pending_bytes();
        tracing::warn!(
            %leader,
            stdout_open = !output.stdout.is_done(),
            stderr_open = output.stderr.is_open(),
            unfinished,
            "a process outside the run still held the CLI's output open {grace} s after the \
             run ended; stopped reading it"
        );
        if !output.stdout.is_done() {
            self.transcript.warn(format!(
                "a process outside the run still held stdout open {grace} s after it ended: \
                 output written after that was not read ({unfinished} byte(s) of an unfinished \
                 line dropped)"
            ));
        }
    }
}
