//! Folding a run's events into its [`Outcome`]. The status is decided from the events and
//! from what the engine did (cancel, deadline), never from the exit code alone: gemini exits 0
//! on a cancel, claude exits 0 on SIGINT.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use crate::agent::Agent;
use crate::dialect::LineIssue;
use crate::event::{AgentEvent, NoticeLevel};
use crate::head_tail::HeadTail;
use crate::open_calls::OpenCalls;
use crate::outcome::{ErrorInfo, ErrorKind, Outcome, Status, ToolCall, ToolSummary, Usage};

/// Finished tool calls kept in the summary.
const RECENT_TOOLS: usize = 20;
/// Distinct notices kept as warnings.
const KEPT_NOTICES: usize = 10;
/// The outcome keeps this much reasoning, head and tail: results show its last 2000
/// characters, and the run's events carry all of it.
const REASONING_KEPT_BYTES: usize = 64 * 1024;

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

enum Terminal {
    Completed,
    Failed {
        message: String,
        http_status: Option<u16>,
    },
    Aborted {
        message: String,
    },
}

pub struct Transcript {
    agent: Agent,
    session_id: Option<String>,
    /// The latest assistant message; deltas extend it while `message_open`.
    message: String,
    message_open: bool,
    final_answer: Option<String>,
    /// The reasoning texts, joined by blank lines as they come (a long run has hundreds of
    /// thousands: one string each would cost more than their text), kept head and tail.
    reasoning: HeadTail,
    reasoning_items: usize,
    tools: ToolSummary,
    started_tools: OpenCalls,
    usage: Option<Usage>,
    terminal: Option<Terminal>,
    /// The engine asked the CLI to stop: a failure reported after that is its consequence.
    stop_requested: bool,
    retries: u32,
    last_retry: Option<String>,
    notices: Vec<String>,
    last_error_notice: Option<String>,
    not_json: u32,
    invalid_utf8: u32,
    unknown_types: BTreeMap<String, u32>,
    malformed: u32,
    first_malformed: Option<String>,
    extra_warnings: Vec<String>,
}

impl Transcript {
    pub fn new(agent: Agent) -> Self {
        Self {
            agent,
            session_id: None,
            message: String::new(),
            message_open: false,
            final_answer: None,
            reasoning: HeadTail::new(REASONING_KEPT_BYTES),
            reasoning_items: 0,
            tools: ToolSummary::default(),
            started_tools: OpenCalls::default(),
            usage: None,
            terminal: None,
            stop_requested: false,
            retries: 0,
            last_retry: None,
            notices: Vec::new(),
            last_error_notice: None,
            not_json: 0,
            invalid_utf8: 0,
            unknown_types: BTreeMap::new(),
            malformed: 0,
            first_malformed: None,
            extra_warnings: Vec::new(),
        }
    }

    pub fn usage_mut(&mut self) -> Option<&mut Usage> {
        self.usage.as_mut()
    }

    pub fn note_stop_requested(&mut self) {
        self.stop_requested = true;
    }

    pub fn warn(&mut self, warning: String) {
        self.extra_warnings.push(warning);
    }

    /// Fold `event` in; it is taken by value, so what the outcome keeps is moved, not copied.
    pub fn record(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::SessionStarted { session_id, .. } => self.session_id = Some(session_id),
            AgentEvent::Text { text, delta: true } => {
                if !self.message_open {
                    self.message.clear();
                    self.message_open = true;
                }
                self.message.push_str(&text);
            }
            AgentEvent::Text { text, delta: false } => {
                self.message = text;
                self.message_open = false;
            }
            AgentEvent::Reasoning { text } => {
                if self.reasoning_items > 0 {
                    self.reasoning.push_str("\n\n");
                }
                self.reasoning.push_str(&text);
                self.reasoning_items += 1;
            }
            AgentEvent::ToolStarted { id, .. } => {
                self.message_open = false;
                self.tools.calls += 1;
                if let Some(id) = id {
                    self.started_tools.open(id);
                }
            }
            AgentEvent::ToolFinished {
                id,
                name,
                command,
                exit_code,
                success,
            } => {
                self.message_open = false;
                let announced = id.is_some_and(|id| self.started_tools.close(&id));
                if !announced {
                    self.tools.calls += 1;
                }
                self.tools.failed += u32::from(!success);
                if self.tools.recent.len() == RECENT_TOOLS {
                    self.tools.recent.remove(0);
                }
                self.tools.recent.push(ToolCall {
                    name,
                    command,
                    exit_code,
                    success,
                });
            }
            AgentEvent::Usage(usage) => self.usage = Some(usage),
            AgentEvent::Notice { level, message } => self.notice(level, &message),
            // The first terminal event decides: an interrupt after a finished turn is noise.
            _ if self.terminal.is_some() => {}
            AgentEvent::TurnCompleted { answer } => {
                self.final_answer = answer.filter(|answer| !answer.is_empty());
                self.terminal = Some(Terminal::Completed);
            }
            AgentEvent::TurnFailed { message, .. } if self.stop_requested => {
                self.terminal = Some(Terminal::Aborted { message });
            }
            AgentEvent::TurnFailed {
                message,
                http_status,
            } => {
                self.terminal = Some(Terminal::Failed {
                    message,
                    http_status,
                });
            }
            AgentEvent::TurnAborted { message } => {
                self.terminal = Some(Terminal::Aborted { message });
            }
        }
    }

    fn notice(&mut self, level: NoticeLevel, message: &str) {
        if level == NoticeLevel::Retry {
            self.retries += 1;
            self.last_retry = Some(message.to_owned());
            return;
        }
        if level == NoticeLevel::Error {
            self.last_error_notice = Some(message.to_owned());
        }
        let line = format!("{}: {message}", self.agent);
        if self.notices.len() < KEPT_NOTICES && !self.notices.contains(&line) {
            self.notices.push(line);
        }
    }

    pub fn record_issue(&mut self, issue: LineIssue) {
        match issue {
            LineIssue::NotJson => self.not_json += 1,
            LineIssue::UnknownType(name) => *self.unknown_types.entry(name).or_default() += 1,
            LineIssue::Malformed { event_type, reason } => {
                self.malformed += 1;
                self.first_malformed
                    .get_or_insert(format!("`{event_type}`: {reason}"));
            }
        }
    }

    pub fn record_invalid_utf8(&mut self) {
        self.invalid_utf8 += 1;
    }

    pub fn finish(mut self, end: ProcessEnd) -> Outcome {
        let (status, error) = self.verdict(&end);
        if status == Status::Completed && end.exit.is_some_and(|exit| !exit.success()) {
            let how = describe_exit(end.exit);
            self.extra_warnings
                .push(format!("{} {how} after completing its turn", self.agent));
        }
        if let Some(error) = &error {
            // codex and gemini announce a fatal error before the turn fails: say it once.
            let repeated = format!("{}: {}", self.agent, error.message);
            self.notices.retain(|notice| *notice != repeated);
        }
        let warnings = self.warnings();
        Outcome {
            agent: self.agent.name().to_owned(),
            status,
            answer: self.final_answer.unwrap_or(self.message),
            session_id: self.session_id,
            reasoning: (self.reasoning_items > 0).then(|| {
                self.reasoning.finish(|omitted| {
                    format!(
                        "… {omitted} characters of reasoning left out: the run's events have them"
                    )
                })
            }),
            tools: self.tools,
            usage: self.usage,
            exit_code: end.exit.and_then(|exit| exit.code()),
            exit_signal: end.exit.and_then(|exit| exit.signal()),
            duration_ms: u64::try_from(end.duration.as_millis()).unwrap_or(u64::MAX),
            stderr_tail: end.stderr_tail,
            warnings,
            error,
        }
    }

    /// A dropped line fails the run whatever else happened: it may have held the answer.
    /// Otherwise completed and failed turns stand as the CLI reported them, whatever the
    /// engine did afterwards, so an answer is never lost to a late cancel.
    fn verdict(&self, end: &ProcessEnd) -> (Status, Option<ErrorInfo>) {
        let agent = self.agent;
        let error = |kind: ErrorKind, message: String| ErrorInfo {
            kind,
            message,
            hint: kind.hint(agent),
        };
        match (&self.terminal, &end.stop) {
            (_, Some(StopCause::OutputTooLarge { bytes, cap })) => {
                let message = format!(
                    "{agent} wrote a line of {bytes} bytes, over the {cap}-byte cap; the run was stopped rather than lose it"
                );
                (
                    Status::Failed,
                    Some(error(ErrorKind::OutputTooLarge, message)),
                )
            }
            (Some(Terminal::Completed), _) => (Status::Completed, None),
            (
                Some(Terminal::Failed {
                    message,
                    http_status,
                }),
                _,
            ) => {
                let kind = ErrorKind::classify(agent.cli(), *http_status, message);
                (Status::Failed, Some(error(kind, message.clone())))
            }
            (_, Some(StopCause::Cancelled)) => (
                Status::Cancelled,
                Some(error(
                    ErrorKind::Cancelled,
                    format!("the {agent} run was cancelled"),
                )),
            ),
            (_, Some(StopCause::TotalTimeout(limit))) => {
                let message = format!(
                    "the {agent} run hit its total timeout of {} s",
                    limit.as_secs()
                );
                (
                    Status::TimedOut,
                    Some(error(ErrorKind::TotalTimeout, message)),
                )
            }
            (_, Some(StopCause::IdleTimeout(limit))) => {
                let message = format!(
                    "{agent} produced no event for {} s (idle timeout)",
                    limit.as_secs()
                );
                (
                    Status::TimedOut,
                    Some(error(ErrorKind::IdleTimeout, message)),
                )
            }
            (Some(Terminal::Aborted { message }), _) => {
                let kind = ErrorKind::classify(agent.cli(), None, message);
                (
                    Status::Failed,
                    Some(error(kind, format!("{agent} stopped its turn: {message}"))),
                )
            }
            (None, _) => (Status::Failed, Some(self.crash(end))),
        }
    }

    /// The CLI exited without a terminal event and without being asked to.
    fn crash(&self, end: &ProcessEnd) -> ErrorInfo {
        let agent = self.agent;
        let said = self.last_error_notice.as_deref().or_else(|| {
            end.stderr_tail
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
        });
        let kind = said.map_or(ErrorKind::Crashed, |said| {
            match ErrorKind::classify(agent.cli(), None, said) {
                ErrorKind::AgentError => ErrorKind::Crashed,
                kind => kind,
            }
        });
        let how = describe_exit(end.exit);
        let message = match said {
            Some(said) => format!("{agent} {how} before finishing its turn: {said}"),
            None => format!("{agent} {how} before finishing its turn"),
        };
        ErrorInfo {
            kind,
            message,
            hint: kind.hint(agent),
        }
    }

    fn warnings(&mut self) -> Vec<String> {
        let agent = self.agent;
        let mut warnings = Vec::new();
        if self.retries > 0 {
            let last = self.last_retry.as_deref().unwrap_or_default();
            warnings.push(format!(
                "{agent} retried {} time(s); last: {last}",
                self.retries
            ));
        }
        warnings.append(&mut self.notices);
        if self.not_json > 0 {
            warnings.push(format!(
                "{} stdout line(s) of {agent} were not JSON and were skipped",
                self.not_json
            ));
        }
        if self.invalid_utf8 > 0 {
            warnings.push(format!(
                "{} line(s) of {agent} had invalid UTF-8, read with replacement characters",
                self.invalid_utf8
            ));
        }
        if !self.unknown_types.is_empty() {
            let types: Vec<String> = self
                .unknown_types
                .iter()
                .map(|(name, n)| format!("{name} ({n})"))
                .collect();
            warnings.push(format!(
                "unknown {agent} event types were ignored: {}",
                types.join(", ")
            ));
        }
        if let Some(first) = &self.first_malformed {
            warnings.push(format!(
                "{} {agent} event(s) had an unexpected shape and were skipped; first: {first}",
                self.malformed
            ));
        }
        warnings.append(&mut self.extra_warnings);
        warnings
    }
}

fn describe_exit(exit: Option<ExitStatus>) -> String {
    match exit {
        Some(exit) => match (exit.code(), exit.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            (None, None) => "exited".to_owned(),
        },
        None => "ended".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::open_calls::OPEN_CALLS;

    fn exit(code: i32) -> Option<ExitStatus> {
        Some(ExitStatus::from_raw(code << 8))
    }

    fn transcript(events: &[AgentEvent]) -> Transcript {
        let mut transcript = Transcript::new(crate::clis::GEMINI);
        events
            .iter()
            .for_each(|event| transcript.record(event.clone()));
        transcript
    }

    fn text(text: &str, delta: bool) -> AgentEvent {
        AgentEvent::Text {
            text: text.into(),
            delta,
        }
    }

    #[test]
    fn deltas_join_into_the_last_message_after_the_last_tool() {
        let outcome = transcript(&[
            text("Let me ", true),
            text("look.", true),
            AgentEvent::ToolStarted {
                id: Some("t1".into()),
                name: "shell".into(),
                command: Some("ls".into()),
            },
            AgentEvent::ToolFinished {
                id: Some("t1".into()),
                name: "shell".into(),
                command: Some("ls".into()),
                exit_code: Some(0),
                success: true,
            },
            text("hel", true),
            text("lo", true),
            AgentEvent::TurnCompleted { answer: None },
        ])
        .finish(ProcessEnd {
            exit: exit(0),
            ..ProcessEnd::default()
        });
        assert_eq!(
            (outcome.status, outcome.answer.as_str()),
            (Status::Completed, "hello")
        );
        assert_eq!((outcome.tools.calls, outcome.tools.failed), (1, 0));
    }

    #[test]
    fn each_tool_call_counts_once_and_calls_that_never_finish_are_forgotten_in_time() {
        let started = |id: String| AgentEvent::ToolStarted {
            id: Some(id),
            name: "shell".into(),
            command: None,
        };
        let finished = |id: &str| AgentEvent::ToolFinished {
            id: Some(id.into()),
            name: "shell".into(),
            command: None,
            exit_code: Some(0),
            success: true,
        };
        let mut events: Vec<AgentEvent> = (0..OPEN_CALLS + 1)
            .map(|n| started(format!("never-{n}")))
            .collect();
        events.extend([started("a".into()), started("b".into()), finished("a")]);
        events.extend([finished("b"), finished("b"), finished("never-0")]);
        let outcome = transcript(&events).finish(ProcessEnd::default());
        // 67 announced calls; the second "b" and "never-0", forgotten once 64 newer calls
        // were open, count as new ones.
        assert_eq!(outcome.tools.calls, OPEN_CALLS as u32 + 3 + 2);
    }

    #[test]
    fn a_completed_turn_wins_over_a_later_cancel_and_a_bad_exit_code() {
        let outcome = transcript(&[
            text("done", false),
            AgentEvent::TurnCompleted {
                answer: Some("final".into()),
            },
        ])
        .finish(ProcessEnd {
            exit: exit(1),
            stop: Some(StopCause::Cancelled),
            ..ProcessEnd::default()
        });
        assert_eq!(
            (outcome.status, outcome.answer.as_str()),
            (Status::Completed, "final")
        );
        assert!(
            outcome
                .warnings
                .iter()
                .any(|w| w.contains("exited with code 1 after completing"))
        );
    }

    #[test]
    fn no_terminal_event_after_a_cancel_is_cancelled_even_with_exit_zero() {
        let outcome = transcript(&[text("partial", true)]).finish(ProcessEnd {
            exit: exit(0),
            stop: Some(StopCause::Cancelled),
            ..ProcessEnd::default()
        });
        assert_eq!(outcome.status, Status::Cancelled);
        assert_eq!(outcome.answer, "partial");
    }

    #[test]
    fn an_abort_the_engine_asked_for_is_cancelled_and_one_it_did_not_is_failed() {
        let aborted = [AgentEvent::TurnAborted {
            message: "aborted_streaming".into(),
        }];
        let asked = transcript(&aborted).finish(ProcessEnd {
            stop: Some(StopCause::Cancelled),
            ..ProcessEnd::default()
        });
        assert_eq!(asked.status, Status::Cancelled);
        let unasked = transcript(&aborted).finish(ProcessEnd {
            exit: exit(1),
            ..ProcessEnd::default()
        });
        assert_eq!(unasked.status, Status::Failed);
    }

    #[test]
    fn the_first_terminal_event_decides() {
        let outcome = transcript(&[
            AgentEvent::TurnCompleted {
                answer: Some("done".into()),
            },
            AgentEvent::TurnAborted {
                message: "aborted_streaming".into(),
            },
        ])
        .finish(ProcessEnd {
            exit: exit(0),
            stop: Some(StopCause::Lingered),
            ..ProcessEnd::default()
        });
        assert_eq!(
            (outcome.status, outcome.answer.as_str()),
            (Status::Completed, "done")
        );
    }

    #[test]
    fn reasoning_items_are_joined_by_blank_lines_and_an_empty_one_still_counts() {
        let reasoning = |texts: &[&str]| {
            let events: Vec<AgentEvent> = texts
                .iter()
                .map(|text| AgentEvent::Reasoning {
                    text: (*text).to_owned(),
                })
                .collect();
            transcript(&events).finish(ProcessEnd::default()).reasoning
        };
        assert_eq!(reasoning(&[]), None);
        assert_eq!(reasoning(&[""]), Some(String::new()));
        assert_eq!(reasoning(&["a", "", "b"]), Some("a\n\n\n\nb".to_owned()));
    }

    #[test]
    fn long_reasoning_keeps_its_head_and_tail_and_says_what_was_left_out() {
        let events: Vec<AgentEvent> = (0..20_000)
            .map(|n| AgentEvent::Reasoning {
                text: format!("step {n}"),
            })
            .collect();
        let reasoning = transcript(&events)
            .finish(ProcessEnd::default())
            .reasoning
            .expect("reasoning");
        assert!(reasoning.len() < REASONING_KEPT_BYTES + 200, "bounded");
        assert!(reasoning.starts_with("step 0\n\nstep 1\n\n"), "the head");
        assert!(
            reasoning.ends_with("step 19998\n\nstep 19999"),
            "the newest tail"
        );
        assert!(reasoning.contains("characters of reasoning left out: the run's events"));
    }

    #[test]
    fn a_failure_reported_after_the_engine_asked_to_stop_is_a_cancel() {
        let mut transcript = Transcript::new(crate::clis::CODEX);
        transcript.note_stop_requested();
        transcript.record(AgentEvent::TurnFailed {
            message: "interrupted".into(),
            http_status: None,
        });
        let outcome = transcript.finish(ProcessEnd {
            exit: exit(1),
            stop: Some(StopCause::Cancelled),
            ..ProcessEnd::default()
        });
        assert_eq!(outcome.status, Status::Cancelled);
    }

    #[test]
    fn a_dropped_line_fails_even_a_completed_turn() {
        let outcome =
            transcript(&[AgentEvent::TurnCompleted { answer: None }]).finish(ProcessEnd {
                stop: Some(StopCause::OutputTooLarge { bytes: 10, cap: 5 }),
                ..ProcessEnd::default()
            });
        assert_eq!(
            outcome.error.map(|e| e.kind),
            Some(ErrorKind::OutputTooLarge)
        );
    }

    #[test]
    fn timeouts_name_the_limit_that_fired() {
        let idle = transcript(&[]).finish(ProcessEnd {
            stop: Some(StopCause::IdleTimeout(Duration::from_secs(9))),
            ..ProcessEnd::default()
        });
        assert_eq!(idle.status, Status::TimedOut);
        let error = idle.error.unwrap();
        assert_eq!(error.kind, ErrorKind::IdleTimeout);
        assert!(error.message.contains("9 s"));
    }

    #[test]
    fn a_silent_crash_quotes_stderr_and_the_exit_code() {
        let outcome = transcript(&[]).finish(ProcessEnd {
            exit: exit(3),
            stderr_tail: "noise\nFatal: config broken\n".into(),
            ..ProcessEnd::default()
        });
        let error = outcome.error.unwrap();
        assert_eq!(
            (outcome.status, error.kind),
            (Status::Failed, ErrorKind::Crashed)
        );
        assert!(
            error.message.contains("exited with code 3") && error.message.contains("config broken"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_reported_failure_is_classified_with_a_hint() {
        let outcome = transcript(&[AgentEvent::TurnFailed {
            message: "API Error: 401 bad key".into(),
            http_status: Some(401),
        }])
        .finish(ProcessEnd {
            exit: exit(145),
            ..ProcessEnd::default()
        });
        let error = outcome.error.unwrap();
        assert_eq!(error.kind, ErrorKind::Authentication);
        assert!(error.hint.unwrap().contains("API key"));
    }

    #[test]
    fn unreadable_lines_are_counted_in_warnings() {
        let mut transcript = transcript(&[AgentEvent::TurnCompleted { answer: None }]);
        transcript.record_issue(LineIssue::NotJson);
        transcript.record_issue(LineIssue::UnknownType("mystery".into()));
        transcript.record_issue(LineIssue::UnknownType("mystery".into()));
        transcript.record_invalid_utf8();
        let warnings = transcript.finish(ProcessEnd::default()).warnings.join("\n");
        assert!(
            warnings.contains("1 stdout line(s)")
                && warnings.contains("mystery (2)")
                && warnings.contains("invalid UTF-8"),
            "{warnings}"
        );
    }
}
