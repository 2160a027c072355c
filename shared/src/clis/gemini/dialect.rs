//! gemini `--output-format stream-json`: `init`, `message`, `tool_use`, `tool_result`,
//! `error` and `result` events.

use std::collections::HashMap;

use serde::Deserialize;

use crate::dialect::json::{event_type, fields, loose_string, sum, unknown};
use crate::dialect::{Dialect, LineIssue};
use crate::event::Usage;
use crate::event::{AgentEvent, NoticeLevel};

/// Parser state for one gemini run.
#[derive(Debug, Default)]
pub struct GeminiDialect {
    /// Tool calls in flight by id: a `tool_result` names only the id.
    tools: HashMap<String, Tool>,
    /// The last `error` event: a failed `result` after a cut stream carries no message.
    last_error: Option<String>,
}

#[derive(Debug)]
struct Tool {
    name: String,
    command: Option<String>,
}

#[derive(Deserialize)]
struct Init {
    session_id: String,
    #[serde(default, deserialize_with = "loose_string")]
    model: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default, deserialize_with = "loose_string")]
    role: Option<String>,
    content: String,
    delta: Option<bool>,
}

#[derive(Deserialize)]
struct ToolUse {
    tool_name: String,
    tool_id: String,
    parameters: Option<Parameters>,
}

#[derive(Deserialize)]
struct Parameters {
    #[serde(default, deserialize_with = "loose_string")]
    command: Option<String>,
}

#[derive(Deserialize)]
struct ToolResult {
    tool_id: String,
    #[serde(default, deserialize_with = "loose_string")]
    status: Option<String>,
}

#[derive(Deserialize)]
struct ErrorLine {
    #[serde(default, deserialize_with = "loose_string")]
    severity: Option<String>,
    message: String,
}

#[derive(Deserialize)]
struct ResultLine {
    #[serde(default, deserialize_with = "loose_string")]
    status: Option<String>,
    stats: Option<Stats>,
    error: Option<ResultError>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Stats {
    total_tokens: u64,
    input_tokens: u64,
    output_tokens: u64,
    cached: u64,
}

#[derive(Deserialize)]
struct ResultError {
    #[serde(default, deserialize_with = "loose_string")]
    message: Option<String>,
}

impl Dialect for GeminiDialect {
    fn parse_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) -> Result<(), LineIssue> {
        let Some(kind) = event_type(line)? else {
            return Ok(());
        };
        match kind.as_ref() {
            "init" => {
                let Init { session_id, model } = fields(line, &kind)?;
                out.push(AgentEvent::SessionStarted { session_id, model });
            }
            "message" => message(fields(line, &kind)?, out),
            "tool_use" => self.tool_use(fields(line, &kind)?, out),
            "tool_result" => self.tool_result(fields(line, &kind)?, out),
            "error" => self.error(fields(line, &kind)?, out),
            "result" => self.result(fields(line, &kind)?, out),
            _ => return Err(unknown(line, &kind)),
        }
        Ok(())
    }
}

/// Assistant messages stream as deltas the engine concatenates; user messages echo the prompt.
fn message(message: Message, out: &mut Vec<AgentEvent>) {
    if message.role.as_deref() == Some("assistant") {
        out.push(AgentEvent::Text {
            text: message.content,
            delta: message.delta.unwrap_or(false),
        });
    }
}

impl GeminiDialect {
    fn tool_use(&mut self, tool: ToolUse, out: &mut Vec<AgentEvent>) {
        let command = tool.parameters.and_then(|parameters| parameters.command);
        out.push(AgentEvent::ToolStarted {
            id: Some(tool.tool_id.clone()),
            name: tool.tool_name.clone(),
            command: command.clone(),
        });
        self.tools.insert(
            tool.tool_id,
            Tool {
                name: tool.tool_name,
                command,
            },
        );
    }

    fn tool_result(&mut self, result: ToolResult, out: &mut Vec<AgentEvent>) {
        let tool = self.tools.remove(&result.tool_id);
        let (name, command) = tool.map_or_else(
            || ("tool".to_owned(), None),
            |tool| (tool.name, tool.command),
        );
        out.push(AgentEvent::ToolFinished {
            id: Some(result.tool_id),
            name,
            command,
            exit_code: None,
            success: result.status.as_deref() == Some("success"),
        });
    }

    fn error(&mut self, error: ErrorLine, out: &mut Vec<AgentEvent>) {
        let level = match error.severity.as_deref() {
            Some("warning") => NoticeLevel::Warning,
            _ => NoticeLevel::Error,
        };
        self.last_error = Some(error.message.clone());
        out.push(AgentEvent::Notice {
            level,
            message: error.message,
        });
    }

    fn result(&mut self, result: ResultLine, out: &mut Vec<AgentEvent>) {
        if let Some(stats) = &result.stats {
            out.push(AgentEvent::Usage(stats.normalised()));
        }
        if result.status.as_deref() == Some("success") {
            out.push(AgentEvent::TurnCompleted { answer: None });
            return;
        }
        let message = result
            .error
            .and_then(|error| error.message)
            .or_else(|| self.last_error.take())
            .unwrap_or_else(|| "gemini reported an error without a message".to_owned());
        let http_status = status_code_in(&message);
        out.push(AgentEvent::TurnFailed {
            message,
            http_status,
        });
    }
}

impl Stats {
    /// Gemini leaves thought tokens out of `output_tokens` but counts them in the total.
    fn normalised(&self) -> Usage {
        let thoughts = self
            .total_tokens
            .saturating_sub(sum(&[self.input_tokens, self.output_tokens]));
        Usage {
            input_tokens: self.input_tokens,
            cached_input_tokens: self.cached,
            output_tokens: sum(&[self.output_tokens, thoughts]),
            reasoning_tokens: (thoughts > 0).then_some(thoughts),
            cost_usd: None,
        }
    }
}

/// The HTTP status in a gemini API error, which quotes the provider's body:
/// `[API Error: {"error":{"code":400,…}}]`.
fn status_code_in(message: &str) -> Option<u16> {
    let (_, after) = message.split_once("\"code\":")?;
    let after = after.trim_start();
    let digits = after
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(after.len());
    let code: u16 = after[..digits].parse().ok()?;
    (100..=599).contains(&code).then_some(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::json::{assert_each_malformed, parse_all, parse_every_prefix, terminal};

    fn parse(stream: &str) -> (Vec<AgentEvent>, Vec<LineIssue>) {
        parse_all(&mut GeminiDialect::default(), stream)
    }

    fn delta(text: &str) -> AgentEvent {
        AgentEvent::Text {
            text: text.to_owned(),
            delta: true,
        }
    }

    #[test]
    fn plain_run_yields_session_delta_text_usage_and_completion() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/gemini/plain.jsonl"
        ));
        assert_eq!(issues, []);
        let expected = [
            AgentEvent::SessionStarted {
                session_id: "b2908feb-7446-49b2-b99e-07a3f0dd5f91".to_owned(),
                model: Some("auto".to_owned()),
            },
            delta("hello from fake model"),
            // The `auto` model asks a router model first: two requests of 100 in, 20 cached,
            // 7 out and 3 thoughts, which gemini leaves out of its output count.
            AgentEvent::Usage(Usage {
                input_tokens: 200,
                cached_input_tokens: 40,
                output_tokens: 20,
                reasoning_tokens: Some(6),
                cost_usd: None,
            }),
            AgentEvent::TurnCompleted { answer: None },
        ];
        assert_eq!(events, expected);
    }

    #[test]
    fn usage_without_thoughts_has_no_reasoning_tokens() {
        let line = r#"{"type":"result","status":"success","stats":{"total_tokens":107,"input_tokens":100,"output_tokens":7,"cached":0}}"#;
        let usage = Usage {
            input_tokens: 100,
            cached_input_tokens: 0,
            output_tokens: 7,
            reasoning_tokens: None,
            cost_usd: None,
        };
        assert_eq!(parse(line).0[0], AgentEvent::Usage(usage));
    }

    #[test]
    fn tool_result_finishes_the_tool_its_id_names() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/gemini/tool_call.jsonl"
        ));
        assert_eq!(issues, []);
        let id = "run_shell_command__run_shell_command_1795293606957_0";
        let started = AgentEvent::ToolStarted {
            id: Some(id.to_owned()),
            name: "run_shell_command".to_owned(),
            command: Some("echo captured-tool-output".to_owned()),
        };
        let finished = AgentEvent::ToolFinished {
            id: Some(id.to_owned()),
            name: "run_shell_command".to_owned(),
            command: Some("echo captured-tool-output".to_owned()),
            exit_code: None,
            success: true,
        };
        assert_eq!(events[1..3], [started, finished]);
        assert_eq!(events[3], delta("tool said: captured-tool-output"));
    }

    #[test]
    fn error_tool_result_finishes_the_tool_as_failed() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/gemini/failed-tool.jsonl"
        ));
        assert_eq!(issues, []);
        let id = "list_directory__list_directory_1795275406800_1";
        let started = AgentEvent::ToolStarted {
            id: Some(id.to_owned()),
            name: "list_directory".to_owned(),
            command: None,
        };
        let finished = AgentEvent::ToolFinished {
            id: Some(id.to_owned()),
            name: "list_directory".to_owned(),
            command: None,
            exit_code: None,
            success: false,
        };
        assert_eq!(events[1..3], [started, finished]);
        // A failed tool does not fail the turn.
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted { answer: None }]
        );
    }

    #[test]
    fn api_error_result_fails_with_its_http_status() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/gemini/error_400.jsonl"
        ));
        assert_eq!(issues, []);
        let message = r#"[API Error: {"error":{"code":400,"message":"scripted failure 400","status":"INVALID_ARGUMENT"}}]"#;
        let failed = AgentEvent::TurnFailed {
            message: message.to_owned(),
            http_status: Some(400),
        };
        assert_eq!(terminal(&events), [&failed]);
    }

    #[test]
    fn failed_result_without_error_takes_the_last_error_event() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/gemini/stream_cut.jsonl"
        ));
        assert_eq!(issues, []);
        let message = "Model stream ended without a finish reason.";
        assert!(events.contains(&AgentEvent::Notice {
            level: NoticeLevel::Error,
            message: message.to_owned()
        }));
        let failed = AgentEvent::TurnFailed {
            message: message.to_owned(),
            http_status: None,
        };
        assert_eq!(terminal(&events), [&failed]);
    }

    #[test]
    fn failed_result_with_no_message_anywhere_still_fails() {
        let (events, _) = parse(r#"{"type":"result","status":"error"}"#);
        let failed = AgentEvent::TurnFailed {
            message: "gemini reported an error without a message".to_owned(),
            http_status: None,
        };
        assert_eq!(events, [failed]);
    }

    #[test]
    fn warning_severity_is_a_warning_notice() {
        let line = r#"{"type":"error","timestamp":"2026-11-21T15:36:24.001Z","severity":"warning","message":"Loop detected"}"#;
        let notice = AgentEvent::Notice {
            level: NoticeLevel::Warning,
            message: "Loop detected".to_owned(),
        };
        assert_eq!(parse(line), (vec![notice], vec![]));
    }

    #[test]
    fn cancelled_run_has_no_terminal_event() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/gemini/cancelled.jsonl"
        ));
        assert_eq!(issues, []);
        // SIGINT ends gemini with nothing after the prompt's echo.
        let expected = [AgentEvent::SessionStarted {
            session_id: "e1988490-99ee-4d1e-b7b6-3759f9835c6f".to_owned(),
            model: Some("auto".to_owned()),
        }];
        assert_eq!(events, expected);
        assert!(terminal(&events).is_empty());
    }

    #[test]
    fn unknown_event_type_is_reported_not_fatal() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/gemini/unknown-events.jsonl"
        ));
        assert_eq!(issues, [LineIssue::UnknownType("thought".to_owned())]);
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted { answer: None }]
        );
    }

    #[test]
    fn garbage_line_is_not_json() {
        for line in [
            "Loaded cached credentials.",
            "{\"type\":\"init\",\"session_id\":",
            "null",
        ] {
            assert_eq!(parse(line), (vec![], vec![LineIssue::NotJson]), "{line}");
        }
    }

    #[test]
    fn missing_fields_are_malformed_not_panics() {
        let lines = [
            (r#"{"type":"init","model":"gemini-2.5-flash"}"#, "init"),
            (r#"{"type":"message","role":"assistant"}"#, "message"),
            (r#"{"type":"tool_use","tool_name":"x"}"#, "tool_use"),
            (
                r#"{"type":"tool_result","status":"success"}"#,
                "tool_result",
            ),
            (
                r#"{"type":"result","status":"success","stats":"none"}"#,
                "result",
            ),
        ];
        assert_each_malformed::<GeminiDialect>(&lines);
    }

    #[test]
    fn status_code_is_read_from_the_quoted_body_only() {
        assert_eq!(status_code_in(r#"{"code": 429}"#), Some(429));
        assert_eq!(
            status_code_in("[API Error: fetch failed sending request]"),
            None
        );
        assert_eq!(status_code_in(r#"{"code":99999}"#), None);
        assert_eq!(status_code_in(r#"{"code":"x"}"#), None);
    }

    #[test]
    fn cut_lines_never_panic() {
        let fixtures = [
            include_str!("../../../../tests/fixtures/captures/gemini/plain.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/reasoning.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/tool_call.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/resume.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/error_400.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/error_401.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/error_429.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/error_500.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/stream_cut.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/connection_refused.jsonl"),
            include_str!("../../../../tests/fixtures/captures/gemini/cancelled.jsonl"),
            include_str!("../../../../tests/fixtures/streams/gemini/failed-tool.jsonl"),
            include_str!("../../../../tests/fixtures/streams/gemini/unknown-events.jsonl"),
        ];
        for fixture in fixtures {
            parse_every_prefix(&mut GeminiDialect::default(), fixture);
        }
    }
}
