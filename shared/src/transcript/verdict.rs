//! A run's status and error, decided from the turn's terminal event and from what the engine
//! did (cancel, deadline, line cap), never from the exit code alone: gemini exits 0 on a
//! cancel, claude exits 0 on SIGINT.

use std::process::ExitStatus;
use std::time::Duration;

use crate::agent::Agent;
use crate::outcome::{ErrorInfo, ErrorKind, Status};

/// Why the engine stopped a run before the CLI ended it by itself.
#[derive(Clone, Debug, PartialEq)]
pub enum StopCause {
    Cancelled,
    TotalTimeout(Duration),
    IdleTimeout(Duration),
    OutputTooLarge {
        bytes: usize,
        cap: usize,
    },
    /// The turn had ended but the CLI did not exit.
    Lingered,
}

/// How the CLI's process ended.
#[derive(Debug, Default)]
pub struct ProcessEnd {
    pub exit: Option<ExitStatus>,
    pub stop: Option<StopCause>,
    pub duration: Duration,
    pub stderr_tail: String,
}

/// How the CLI said its turn ended.
pub(super) enum Terminal {
    Completed,
    Failed {
        message: String,
        http_status: Option<u16>,
    },
    Aborted {
        message: String,
    },
}

/// What the verdict stands on: the agent, how the CLI said its turn ended, and the last error
/// it noticed.
pub(super) struct Verdict<'a> {
    pub agent: Agent,
    pub terminal: Option<&'a Terminal>,
    pub last_error_notice: Option<&'a str>,
}

impl Verdict<'_> {
    /// A dropped line fails the run whatever else happened: it may have held the answer.
    /// Otherwise completed and failed turns stand as the CLI reported them, whatever the
    /// engine did afterwards, so an answer is never lost to a late cancel.
    pub(super) fn decide(&self, end: &ProcessEnd) -> (Status, Option<ErrorInfo>) {
        let agent = self.agent;
        if let Some(StopCause::OutputTooLarge { bytes, cap }) = &end.stop {
            let message = format!(
                "{agent} wrote a line of {bytes} bytes, over the {cap}-byte cap; the run was stopped rather than lose it"
            );
            return self.failed(ErrorKind::OutputTooLarge, message);
        }
        match self.terminal {
            Some(Terminal::Completed) => return (Status::Completed, None),
            Some(Terminal::Failed {
                message,
                http_status,
            }) => return self.failed(self.classify(*http_status, message), message.clone()),
            _ => {}
        }
        if let Some(stopped) = end.stop.as_ref().and_then(|stop| self.stopped(stop)) {
            return stopped;
        }
        match self.terminal {
            Some(Terminal::Aborted { message }) => self.failed(
                self.classify(None, message),
                format!("{agent} stopped its turn: {message}"),
            ),
            _ => (Status::Failed, Some(self.crash(end))),
        }
    }

    /// The verdict on a run the engine stopped without a turn's end to stand on; `None` for
    /// the stops that leave the verdict to the turn.
    fn stopped(&self, stop: &StopCause) -> Option<(Status, Option<ErrorInfo>)> {
        let agent = self.agent;
        let (status, kind, message) = match stop {
            StopCause::Cancelled => (
                Status::Cancelled,
                ErrorKind::Cancelled,
                format!("the {agent} run was cancelled"),
            ),
            StopCause::TotalTimeout(limit) => (
                Status::TimedOut,
                ErrorKind::TotalTimeout,
                format!(
                    "the {agent} run hit its total timeout of {} s",
                    limit.as_secs()
                ),
            ),
            StopCause::IdleTimeout(limit) => (
                Status::TimedOut,
                ErrorKind::IdleTimeout,
                format!(
                    "{agent} produced no event for {} s (idle timeout)",
                    limit.as_secs()
                ),
            ),
            StopCause::OutputTooLarge { .. } | StopCause::Lingered => return None,
        };
        Some((status, Some(self.error(kind, message))))
    }

    /// The CLI exited without a terminal event and without being asked to.
    fn crash(&self, end: &ProcessEnd) -> ErrorInfo {
        let agent = self.agent;
        let said = self.last_error_notice.or_else(|| {
            end.stderr_tail
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
        });
        let kind = said.map_or(ErrorKind::Crashed, |said| match self.classify(None, said) {
            ErrorKind::AgentError => ErrorKind::Crashed,
            kind => kind,
        });
        let how = describe_exit(end.exit);
        let message = match said {
            Some(said) => format!("{agent} {how} before finishing its turn: {said}"),
            None => format!("{agent} {how} before finishing its turn"),
        };
        self.error(kind, message)
    }

    fn classify(&self, http_status: Option<u16>, message: &str) -> ErrorKind {
        ErrorKind::classify(self.agent.cli(), http_status, message)
    }

    fn failed(&self, kind: ErrorKind, message: String) -> (Status, Option<ErrorInfo>) {
        (Status::Failed, Some(self.error(kind, message)))
    }

    fn error(&self, kind: ErrorKind, message: String) -> ErrorInfo {
        ErrorInfo {
            kind,
            message,
            hint: self.agent.hint(kind),
        }
    }
}

/// How the process ended, for messages: `exited with code 3`, `was killed by signal 9`.
pub(super) fn describe_exit(exit: Option<ExitStatus>) -> String {
    match exit {
        Some(exit) => match (exit.code(), crate::platform::exit_signal(exit)) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            (None, None) => "exited".to_owned(),
        },
        None => "ended".to_owned(),
    }
}
