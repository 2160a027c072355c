//! Folding a run's events into its [`Outcome`]: the answer, session, reasoning and usage,
//! with the tool calls ([`tools`]), the skipped lines ([`lines`]) and the verdict
//! ([`verdict`]) kept by parts of their own.

mod lines;
mod tools;
mod verdict;

use crate::agent::Agent;
use crate::dialect::LineIssue;
use crate::event::Usage;
use crate::event::{AgentEvent, NoticeLevel};
use crate::head_tail::HeadTail;
use crate::outcome::{Outcome, Status, ToolCall};
use lines::LineDiagnostics;
use tools::ToolTally;
pub use verdict::{ProcessEnd, StopCause};
use verdict::{Terminal, Verdict, describe_exit};

/// Distinct notices kept as warnings.
const KEPT_NOTICES: usize = 10;
/// The outcome keeps this much reasoning, head and tail: results show its last 2000
/// characters, and the run's events carry all of it.
const REASONING_KEPT_BYTES: usize = 64 * 1024;

/// What a run has said so far, folded event by event into what its outcome will report.
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
    tools: ToolTally,
    usage: Option<Usage>,
    terminal: Option<Terminal>,
    /// The engine asked the CLI to stop: a failure reported after that is its consequence.
    stop_requested: bool,
    retries: u32,
    last_retry: Option<String>,
    notices: Vec<String>,
    last_error_notice: Option<String>,
    lines: LineDiagnostics,
    extra_warnings: Vec<String>,
    /// Tool calls whose output told of a refused write, named by their command or tool.
    refused: Vec<String>,
}

/// Refused tool calls named in the warning; more are counted only.
const REFUSED_NAMED: usize = 5;

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
            tools: ToolTally::default(),
            usage: None,
            terminal: None,
            stop_requested: false,
            retries: 0,
            last_retry: None,
            notices: Vec::new(),
            last_error_notice: None,
            lines: LineDiagnostics::default(),
            extra_warnings: Vec::new(),
            refused: Vec::new(),
        }
    }

    /// A tool call's output said a write was refused (see [`crate::sandbox`]).
    pub fn note_refused(&mut self, call: String) {
        if self.refused.len() < REFUSED_NAMED && !self.refused.contains(&call) {
            self.refused.push(call);
        }
    }

    /// The tool calls told of refused writes, by [`Transcript::note_refused`].
    pub fn refused(&self) -> &[String] {
        &self.refused
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
            AgentEvent::Text { text, delta } => self.text(text, delta),
            AgentEvent::Reasoning { text } => self.reasoning(&text),
            AgentEvent::ToolStarted { id, .. } => {
                self.message_open = false;
                self.tools.started(id);
            }
            AgentEvent::ToolFinished {
                id,
                name,
                command,
                exit_code,
                success,
            } => {
                self.message_open = false;
                let call = ToolCall {
                    name,
                    command,
                    exit_code,
                    success,
                };
                self.tools.finished(id, call);
            }
            AgentEvent::Usage(usage) => self.usage = Some(usage),
            AgentEvent::Notice { level, message } => self.notice(level, &message),
            // The person's answers shape the run (the CLI hears them), not its outcome.
            AgentEvent::Question(_) => {}
            ending => self.end_turn(ending),
        }
    }

    /// The first terminal event decides: an interrupt after a finished turn is noise.
    fn end_turn(&mut self, event: AgentEvent) {
        if self.terminal.is_some() {
            return;
        }
        self.terminal = match event {
            AgentEvent::TurnCompleted { answer } => {
                self.final_answer = answer.filter(|answer| !answer.is_empty());
                Some(Terminal::Completed)
            }
            AgentEvent::TurnFailed { message, .. } if self.stop_requested => {
                Some(Terminal::Aborted { message })
            }
            AgentEvent::TurnFailed {
                message,
                http_status,
            } => Some(Terminal::Failed {
                message,
                http_status,
            }),
            AgentEvent::TurnAborted { message } => Some(Terminal::Aborted { message }),
            _ => None,
        };
    }

    /// A whole message replaces the last one; deltas build one up, the first of them starting
    /// it afresh.
    fn text(&mut self, text: String, delta: bool) {
        if !delta {
            self.message = text;
            self.message_open = false;
            return;
        }
        if !self.message_open {
            self.message.clear();
            self.message_open = true;
        }
        self.message.push_str(&text);
    }

    fn reasoning(&mut self, text: &str) {
        if self.reasoning_items > 0 {
            self.reasoning.push_str("\n\n");
        }
        self.reasoning.push_str(text);
        self.reasoning_items += 1;
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
        self.lines.record(issue);
    }

    pub fn record_invalid_utf8(&mut self) {
        self.lines.record_invalid_utf8();
    }

    pub fn finish(mut self, end: ProcessEnd) -> Outcome {
        let verdict = Verdict {
            agent: self.agent,
            terminal: self.terminal.as_ref(),
            last_error_notice: self.last_error_notice.as_deref(),
        };
        let (status, error) = verdict.decide(&end);
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
            tools: self.tools.into_summary(),
            usage: self.usage,
            exit_code: end.exit.and_then(|exit| exit.code()),
            exit_signal: end.exit.and_then(crate::platform::exit_signal),
            duration_ms: u64::try_from(end.duration.as_millis()).unwrap_or(u64::MAX),
            stderr_tail: end.stderr_tail,
            warnings,
            error,
            tree: None,
            check: None,
            output: None,
        }
    }

    fn warnings(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.retries > 0 {
            let last = self.last_retry.as_deref().unwrap_or_default();
            warnings.push(format!(
                "{} retried {} time(s); last: {last}",
                self.agent, self.retries
            ));
        }
        warnings.append(&mut self.notices);
        self.lines.warnings(self.agent, &mut warnings);
        warnings.append(&mut self.extra_warnings);
        warnings
    }
}

#[cfg(test)]
mod tests {
    use std::process::ExitStatus;
    use std::time::Duration;

    use super::*;
    use crate::open_calls::OPEN_CALLS;
    use crate::outcome::ErrorKind;

    fn exit(code: i32) -> Option<ExitStatus> {
        #[cfg(unix)]
        let status = std::os::unix::process::ExitStatusExt::from_raw(code << 8);
        #[cfg(windows)]
        let status = std::os::windows::process::ExitStatusExt::from_raw(code.cast_unsigned());
        Some(status)
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
