//! opencode `run --format json`: `step_start`, `text`, `reasoning`, `tool_use`, `step_finish`
//! and `error` events, each carrying the session id.

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::dialect::json::{
    event_type, fields, loose_http_status, loose_int, loose_string, sum, unknown,
};
use crate::dialect::{Dialect, LineIssue};
use crate::event::AgentEvent;
use crate::event::Usage;

/// `step_finish` events with reason `unknown` in a row that mean a cut stream: opencode then
/// starts a new model call, forever.
const CUT_STREAM_STEPS: u32 = 3;

/// Parser state for one opencode run.
#[derive(Debug, Default)]
pub struct OpencodeDialect {
    session_announced: bool,
    /// Sum over the run's `step_finish` events, one per model call.
    usage: Usage,
    /// `step_finish` with reason `unknown` since the last sign of progress.
    unknown_steps: u32,
}

/// Every opencode event names its session; most carry a `part`.
#[derive(Deserialize)]
struct Line<P> {
    #[serde(rename = "sessionID", default, deserialize_with = "loose_string")]
    session_id: Option<String>,
    part: P,
}

#[derive(Deserialize)]
struct TextPart {
    text: String,
}

#[derive(Deserialize)]
struct ToolPart {
    #[serde(default, deserialize_with = "loose_string")]
    tool: Option<String>,
    #[serde(rename = "callID", default, deserialize_with = "loose_string")]
    call_id: Option<String>,
    state: Option<ToolState>,
}

#[derive(Default, Deserialize)]
struct ToolState {
    #[serde(default, deserialize_with = "loose_string")]
    status: Option<String>,
    input: Option<ToolInput>,
    metadata: Option<ToolMetadata>,
}

#[derive(Deserialize)]
struct ToolInput {
    #[serde(default, deserialize_with = "loose_string")]
    command: Option<String>,
}

#[derive(Deserialize)]
struct ToolMetadata {
    #[serde(default, deserialize_with = "loose_int")]
    exit: Option<i64>,
}

#[derive(Deserialize)]
struct FinishPart {
    #[serde(default, deserialize_with = "loose_string")]
    reason: Option<String>,
    tokens: Option<Tokens>,
    cost: Option<f64>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Tokens {
    input: u64,
    output: u64,
    reasoning: u64,
    cache: Option<Cache>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Cache {
    read: u64,
    write: u64,
}

#[derive(Deserialize)]
struct ErrorLine {
    #[serde(rename = "sessionID", default, deserialize_with = "loose_string")]
    session_id: Option<String>,
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default, deserialize_with = "loose_string")]
    name: Option<String>,
    data: Option<ErrorData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ErrorData {
    #[serde(default, deserialize_with = "loose_string")]
    message: Option<String>,
    #[serde(default, deserialize_with = "loose_http_status")]
    status_code: Option<u16>,
}

impl Dialect for OpencodeDialect {
    fn parse_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) -> Result<(), LineIssue> {
        let Some(kind) = event_type(line)? else {
            return Ok(());
        };
        match kind.as_ref() {
            "step_start" => {
                let Line::<IgnoredAny> { session_id, .. } = fields(line, &kind)?;
                self.announce(session_id, out);
            }
            "text" => {
                let Line {
                    session_id,
                    part: TextPart { text },
                } = fields(line, &kind)?;
                self.announce(session_id, out);
                // Not progress: a cut stream still prints the partial text before its step ends.
                out.push(AgentEvent::Text { text, delta: false });
            }
            "reasoning" => {
                let Line {
                    session_id,
                    part: TextPart { text },
                } = fields(line, &kind)?;
                self.announce(session_id, out);
                out.push(AgentEvent::Reasoning { text });
            }
            "tool_use" => {
                let Line { session_id, part } = fields(line, &kind)?;
                self.announce(session_id, out);
                self.tool_use(part, out);
            }
            "step_finish" => {
                let Line { session_id, part } = fields(line, &kind)?;
                self.announce(session_id, out);
                self.step_finish(part, out);
            }
            "error" => {
                let ErrorLine { session_id, error } = fields(line, &kind)?;
                self.announce(session_id, out);
                out.push(failure(error));
            }
            _ => return Err(unknown(line, &kind)),
        }
        Ok(())
    }
}

impl OpencodeDialect {
    /// opencode has no start event: the session id comes with every line.
    fn announce(&mut self, session_id: Option<String>, out: &mut Vec<AgentEvent>) {
        if self.session_announced {
            return;
        }
        if let Some(session_id) = session_id {
            self.session_announced = true;
            out.push(AgentEvent::SessionStarted {
                session_id,
                model: None,
            });
        }
    }

    /// opencode reports a tool only once it has finished, so it starts and finishes here.
    fn tool_use(&mut self, part: ToolPart, out: &mut Vec<AgentEvent>) {
        self.unknown_steps = 0;
        let state = part.state.unwrap_or_default();
        let command = state.input.and_then(|input| input.command);
        let exit_code = state.metadata.and_then(|metadata| metadata.exit);
        let name = part.tool.unwrap_or_else(|| "tool".to_owned());
        out.push(AgentEvent::ToolStarted {
            id: part.call_id.clone(),
            name: name.clone(),
            command: command.clone(),
        });
        // `completed` only means the tool ran: a failed command is completed with a non-zero exit.
        let success =
            state.status.as_deref() == Some("completed") && exit_code.is_none_or(|code| code == 0);
        out.push(AgentEvent::ToolFinished {
            id: part.call_id,
            name,
            command,
            exit_code,
            success,
        });
    }

    fn step_finish(&mut self, part: FinishPart, out: &mut Vec<AgentEvent>) {
        self.add_usage(part.tokens.unwrap_or_default(), part.cost.unwrap_or(0.0));
        out.push(AgentEvent::Usage(self.usage));
        match part.reason.as_deref() {
            Some("stop") => {
                self.unknown_steps = 0;
                out.push(AgentEvent::TurnCompleted { answer: None });
            }
            Some("unknown") => {
                self.unknown_steps = self.unknown_steps.saturating_add(1);
                if self.unknown_steps == CUT_STREAM_STEPS {
                    out.push(AgentEvent::TurnFailed {
                        message: cut_stream_message(),
                        http_status: None,
                    });
                }
            }
            _ => self.unknown_steps = 0,
        }
    }

    /// opencode reports cached input and reasoning apart; the engine's usage includes them.
    fn add_usage(&mut self, tokens: Tokens, cost: f64) {
        let cache = tokens.cache.unwrap_or_default();
        let usage = &mut self.usage;
        usage.input_tokens = sum(&[usage.input_tokens, tokens.input, cache.read, cache.write]);
        usage.cached_input_tokens = sum(&[usage.cached_input_tokens, cache.read]);
        usage.output_tokens = sum(&[usage.output_tokens, tokens.output, tokens.reasoning]);
        let reasoning = usage.reasoning_tokens.unwrap_or(0);
        usage.reasoning_tokens = Some(sum(&[reasoning, tokens.reasoning]));
        usage.cost_usd = Some(usage.cost_usd.unwrap_or(0.0) + cost);
    }
}

fn cut_stream_message() -> String {
    format!(
        "the model stream ended without a finish reason {CUT_STREAM_STEPS} times in a row; \
         opencode retries a cut stream forever, so the run was stopped"
    )
}

/// An `error` event: an abort (opencode's `MessageAbortedError`) or a failure.
fn failure(error: Option<ErrorBody>) -> AgentEvent {
    let (name, data) = error.map_or((None, None), |error| (error.name, error.data));
    let aborted = name.as_deref() == Some("MessageAbortedError");
    let (message, http_status) = data.map_or((None, None), |data| (data.message, data.status_code));
    let message = message
        .or(name)
        .unwrap_or_else(|| "opencode reported an error without a message".to_owned());
    if aborted {
        AgentEvent::TurnAborted { message }
    } else {
        AgentEvent::TurnFailed {
            message,
            http_status,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::json::{
        assert_each_malformed, last_usage, parse_all, parse_every_prefix, terminal,
    };

    fn parse(stream: &str) -> (Vec<AgentEvent>, Vec<LineIssue>) {
        parse_all(&mut OpencodeDialect::default(), stream)
    }

    #[test]
    fn plain_run_yields_session_text_usage_and_completion() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/opencode/plain.jsonl"
        ));
        assert_eq!(issues, []);
        let expected = [
            AgentEvent::SessionStarted {
                session_id: "ses_e0029b311ffe7nV66xDJTVWK0d".to_owned(),
                model: None,
            },
            AgentEvent::Text {
                text: "hello from fake model".to_owned(),
                delta: false,
            },
            AgentEvent::Usage(Usage {
                input_tokens: 100,
                cached_input_tokens: 20,
                output_tokens: 7,
                reasoning_tokens: Some(3),
                cost_usd: Some(0.0),
            }),
            AgentEvent::TurnCompleted { answer: None },
        ];
        assert_eq!(events, expected);
    }

    #[test]
    fn reasoning_part_is_reasoning() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/opencode/reasoning.jsonl"
        ));
        assert_eq!(issues, []);
        assert_eq!(
            events[1],
            AgentEvent::Reasoning {
                text: "**Thinking** about the answer".to_owned()
            }
        );
    }

    /// The tool calls among `events`, in order.
    fn tool_events(events: &[AgentEvent]) -> Vec<&AgentEvent> {
        events
            .iter()
            .filter(|event| {
                matches!(
                    event,
                    AgentEvent::ToolStarted { .. } | AgentEvent::ToolFinished { .. }
                )
            })
            .collect()
    }

    fn bash_started(id: &str, command: &str) -> AgentEvent {
        AgentEvent::ToolStarted {
            id: Some(id.to_owned()),
            name: "bash".to_owned(),
            command: Some(command.to_owned()),
        }
    }

    fn bash_finished(id: &str, command: &str, exit_code: Option<i64>, success: bool) -> AgentEvent {
        AgentEvent::ToolFinished {
            id: Some(id.to_owned()),
            name: "bash".to_owned(),
            command: Some(command.to_owned()),
            exit_code,
            success,
        }
    }

    #[test]
    fn finished_tool_is_started_and_judged_by_its_exit_code() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/opencode/tool_call.jsonl"
        ));
        assert_eq!(issues, []);
        let command = "echo captured-tool-output";
        let expected = [
            bash_started("call_7", command),
            bash_finished("call_7", command, Some(0), true),
        ];
        assert_eq!(tool_events(&events), expected.iter().collect::<Vec<_>>());
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted { answer: None }]
        );
        // Two steps, the tool call's and the answer's.
        let usage = Usage {
            input_tokens: 200,
            cached_input_tokens: 40,
            output_tokens: 14,
            reasoning_tokens: Some(6),
            cost_usd: Some(0.0),
        };
        assert_eq!(last_usage(&events), Some(usage));
    }

    #[test]
    fn nonzero_exit_or_error_status_finishes_the_tool_as_failed() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/opencode/failed-tools.jsonl"
        ));
        assert_eq!(issues, []);
        let expected = [
            bash_started("call_3b91c0", "if then"),
            bash_finished("call_3b91c0", "if then", Some(2), false),
            bash_started("call_a492f7", "touch x"),
            bash_finished("call_a492f7", "touch x", None, false),
        ];
        assert_eq!(tool_events(&events), expected.iter().collect::<Vec<_>>());
        // Failed tools do not fail the turn.
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted { answer: None }]
        );
    }

    #[test]
    fn usage_sums_every_step_finish() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/opencode/failed-tools.jsonl"
        ));
        assert_eq!(issues, []);
        let expected = Usage {
            input_tokens: 100 + 220,
            cached_input_tokens: 20 + 100,
            output_tokens: 12 + 9,
            reasoning_tokens: Some(3 + 4),
            cost_usd: Some(0.25 + 0.5),
        };
        assert_eq!(last_usage(&events), Some(expected));
    }

    #[test]
    fn session_is_announced_once() {
        let (events, _) = parse(include_str!(
            "../../../../tests/fixtures/captures/opencode/tool_call.jsonl"
        ));
        let sessions = events
            .iter()
            .filter(|event| matches!(event, AgentEvent::SessionStarted { .. }));
        assert_eq!(sessions.count(), 1);
        assert!(
            matches!(&events[0], AgentEvent::SessionStarted { session_id, .. } if session_id == "ses_e00297c11ffeE4su8ZXMemv68E")
        );
    }

    #[test]
    fn an_aborted_message_is_an_abort_not_a_failure() {
        let line = r#"{"type":"error","timestamp":1,"sessionID":"ses_a","error":{"name":"MessageAbortedError","data":{"message":"The operation was aborted."}}}"#;
        let (events, _) = parse_all(&mut OpencodeDialect::default(), line);
        assert!(
            matches!(events.last(), Some(AgentEvent::TurnAborted { message }) if message == "The operation was aborted."),
            "{events:?}"
        );
    }

    #[test]
    fn api_error_fails_with_its_status_code() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/opencode/error_400.jsonl"
        ));
        assert_eq!(issues, []);
        let failed = AgentEvent::TurnFailed {
            message: "scripted failure 400".to_owned(),
            http_status: Some(400),
        };
        assert_eq!(terminal(&events), [&failed]);
    }

    #[test]
    fn connection_error_fails_without_a_status() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/opencode/connection_refused.jsonl"
        ));
        assert_eq!(issues, []);
        let failed = AgentEvent::TurnFailed {
            message:
                "Cannot connect to API: Unable to connect. Is the computer able to access the url?"
                    .to_owned(),
            http_status: None,
        };
        assert_eq!(terminal(&events), [&failed]);
    }

    #[test]
    fn error_without_data_falls_back_to_its_name() {
        let (events, _) =
            parse(r#"{"type":"error","sessionID":"ses_1","error":{"name":"UnknownError"}}"#);
        assert_eq!(
            events[1],
            AgentEvent::TurnFailed {
                message: "UnknownError".to_owned(),
                http_status: None
            }
        );
    }

    #[test]
    fn huge_token_counts_saturate_instead_of_overflowing() {
        let step = r#"{"type":"step_finish","sessionID":"ses_1","part":{"reason":"tool-calls","tokens":{"input":18446744073709551615,"output":18446744073709551615,"reasoning":1,"cache":{"read":1,"write":1}}}}"#;
        let (events, issues) = parse(&[step, step].join("\n"));
        assert_eq!(issues, []);
        let usage = last_usage(&events).map(|usage| (usage.input_tokens, usage.output_tokens));
        assert_eq!(usage, Some((u64::MAX, u64::MAX)));
    }

    #[test]
    fn cut_stream_loop_fails_after_three_unknown_steps() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/opencode/stream_cut.jsonl"
        ));
        assert_eq!(issues, []);
        let failed = AgentEvent::TurnFailed {
            message: cut_stream_message(),
            http_status: None,
        };
        assert_eq!(terminal(&events), [&failed]);
    }

    #[test]
    fn a_finished_tool_between_unknown_steps_resets_the_count() {
        let unknown = r#"{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"unknown","tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0}}"#;
        let tool = r#"{"type":"tool_use","sessionID":"ses_1","part":{"type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls"},"metadata":{"exit":0}}}}"#;
        let stream = [unknown, unknown, tool, unknown, unknown].join("\n");
        let (events, issues) = parse(&stream);
        assert_eq!(issues, []);
        assert!(terminal(&events).is_empty());
    }

    #[test]
    fn unknown_event_type_is_reported_not_fatal() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/opencode/unknown-events.jsonl"
        ));
        assert_eq!(issues, [LineIssue::UnknownType("file_edited".to_owned())]);
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted { answer: None }]
        );
    }

    #[test]
    fn garbage_line_is_not_json() {
        for line in ["\u{1b}[0m> build", "{\"type\":\"text\",\"part\":{", "true"] {
            assert_eq!(parse(line), (vec![], vec![LineIssue::NotJson]), "{line}");
        }
    }

    #[test]
    fn missing_fields_are_malformed_not_panics() {
        let lines = [
            (r#"{"type":"text","sessionID":"ses_1"}"#, "text"),
            (
                r#"{"type":"text","sessionID":"ses_1","part":{"type":"text"}}"#,
                "text",
            ),
            (
                r#"{"type":"step_finish","sessionID":"ses_1"}"#,
                "step_finish",
            ),
            (
                r#"{"type":"tool_use","sessionID":"ses_1","part":{"state":"done"}}"#,
                "tool_use",
            ),
        ];
        assert_each_malformed::<OpencodeDialect>(&lines);
    }

    #[test]
    fn cut_lines_never_panic() {
        let fixtures = [
            include_str!("../../../../tests/fixtures/captures/opencode/plain.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/reasoning.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/tool_call.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/resume.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/error_400.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/error_401.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/error_429.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/error_500.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/stream_cut.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/connection_refused.jsonl"),
            include_str!("../../../../tests/fixtures/captures/opencode/cancelled.jsonl"),
            include_str!("../../../../tests/fixtures/streams/opencode/failed-tools.jsonl"),
            include_str!("../../../../tests/fixtures/streams/opencode/unknown-events.jsonl"),
        ];
        for fixture in fixtures {
            parse_every_prefix(&mut OpencodeDialect::default(), fixture);
        }
    }
}
