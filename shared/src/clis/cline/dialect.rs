//! `cline --json`: one JSON object a line, `{ts, type, …}`. The agent's own events are
//! `agent_event` lines wrapping `{type, …}`: `content_start` carries each piece of text as it
//! streams and a tool call as it starts, `content_end` the whole text, reasoning or tool
//! result, `usage` the run's running totals, `error` a failure. The run ends with
//! `run_result` (its finish reason, answer and usage), or `run_aborted` after an interrupt.
//! No line names the session: Cline 3.0.65 keeps its id to itself.

use std::collections::HashMap;

use serde::Deserialize;

use crate::dialect::json::{Empty, event_type, fields, loose_string, unknown};
use crate::dialect::{Dialect, LineIssue};
use crate::event::{AgentEvent, NoticeLevel, Usage};

/// Parser state for one cline run.
#[derive(Debug, Default)]
pub struct ClineDialect {
    /// The latest unrecoverable error: why a run whose result says `error` failed.
    error: Option<String>,
    /// The commands of the tool calls in flight, by id: their end names only the id.
    commands: HashMap<String, String>,
}

#[derive(Deserialize)]
struct AgentLine {
    event: Event,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    ContentStart(Content),
    ContentEnd(Content),
    Usage(Totals),
    Error(Failure),
    /// Iterations, updates of a running tool, `done` (the `run_result` after it says more).
    #[serde(other)]
    Progress,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Content {
    content_type: ContentType,
    #[serde(default, deserialize_with = "loose_string")]
    text: Option<String>,
    #[serde(default, deserialize_with = "loose_string")]
    reasoning: Option<String>,
    #[serde(default, deserialize_with = "loose_string")]
    tool_name: Option<String>,
    #[serde(default, deserialize_with = "loose_string")]
    tool_call_id: Option<String>,
    #[serde(default)]
    input: ToolInput,
    #[serde(default)]
    output: Option<serde_json::Value>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum ContentType {
    Text,
    Reasoning,
    Tool,
    #[serde(other)]
    Other,
}

/// `run_commands` takes a list of commands.
#[derive(Default, Deserialize)]
struct ToolInput {
    #[serde(default)]
    commands: Vec<String>,
}

/// The run's totals so far; Cline's input count holds the cache reads, as OpenAI's does.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Totals {
    total_input_tokens: u64,
    total_output_tokens: u64,
    #[serde(default)]
    total_cache_read_tokens: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Failure {
    error: FailureError,
    /// `auth`, `context_window_exceeded` or `unknown`: Cline's reading of the provider's
    /// error, whose HTTP status it does not pass on.
    #[serde(default, deserialize_with = "loose_string")]
    error_class: Option<String>,
    #[serde(default)]
    recoverable: bool,
}

#[derive(Deserialize)]
struct FailureError {
    #[serde(default, deserialize_with = "loose_string")]
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunResult {
    finish_reason: String,
    #[serde(default, deserialize_with = "loose_string")]
    text: Option<String>,
    usage: RunUsage,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunUsage {
    input_tokens: u64,
    output_tokens: u64,
    #[serde(default)]
    cache_read_tokens: u64,
}

#[derive(Deserialize)]
struct Aborted {
    #[serde(default, deserialize_with = "loose_string")]
    message: Option<String>,
}

/// Lines that say nothing the outcome needs: hooks (their payload is not in the line),
/// `run_start` (with `-v`), an abort asked for (`run_aborted` follows), teams' bookkeeping.
const PROGRESS_ONLY: &[&str] = &[
    "hook_event",
    "run_start",
    "run_abort_requested",
    "team_event",
    "team_restored",
];

impl Dialect for ClineDialect {
    fn parse_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) -> Result<(), LineIssue> {
        let Some(kind) = event_type(line)? else {
            return Ok(());
        };
        match kind.as_ref() {
            "agent_event" => {
                let AgentLine { event } = fields(line, &kind)?;
                self.event(event, out);
            }
            "run_result" => self.result(fields(line, &kind)?, out),
            "run_aborted" => {
                let aborted: Aborted = fields(line, &kind)?;
                out.push(AgentEvent::TurnAborted {
                    message: aborted.message.unwrap_or_else(|| "aborted".to_owned()),
                });
            }
            // Written after `run_result` with the same message, or alone when Cline would not
            // start (a bad flag): the engine reports that exit.
            "error" => {
                let failure: Aborted = fields(line, &kind)?;
                out.push(AgentEvent::Notice {
                    level: NoticeLevel::Error,
                    message: failure.message.unwrap_or_else(|| "cline failed".to_owned()),
                });
            }
            kind if PROGRESS_ONLY.contains(&kind) => {
                let Empty {} = fields(line, kind)?;
            }
            _ => return Err(unknown(line, &kind)),
        }
        Ok(())
    }
}

impl ClineDialect {
    fn event(&mut self, event: Event, out: &mut Vec<AgentEvent>) {
        match event {
            Event::ContentStart(content) if content.content_type == ContentType::Tool => {
                self.tool_started(content, out);
            }
            Event::ContentEnd(content) => self.ended(content, out),
            Event::Usage(totals) => out.push(AgentEvent::Usage(Usage {
                input_tokens: totals.total_input_tokens,
                cached_input_tokens: totals.total_cache_read_tokens,
                output_tokens: totals.total_output_tokens,
                reasoning_tokens: None,
                cost_usd: None,
            })),
            Event::Error(failure) => self.failed(failure, out),
            // A text piece streaming: its content_end gives the whole text.
            Event::ContentStart(_) | Event::Progress => {}
        }
    }

    /// A recoverable error (a refused tool call the model is told of) is a notice; the
    /// last other one is why the run failed, with Cline's class of it when it has one.
    fn failed(&mut self, failure: Failure, out: &mut Vec<AgentEvent>) {
        let message = failure
            .error
            .message
            .unwrap_or_else(|| "cline reported an error".to_owned());
        if failure.recoverable {
            out.push(AgentEvent::Notice {
                level: NoticeLevel::Error,
                message,
            });
            return;
        }
        self.error = Some(match failure.error_class.as_deref() {
            None | Some("unknown") => message,
            Some(class) => format!("{message} ({class} error)"),
        });
    }

    fn result(&mut self, result: RunResult, out: &mut Vec<AgentEvent>) {
        let usage = result.usage;
        out.push(AgentEvent::Usage(Usage {
            input_tokens: usage.input_tokens,
            cached_input_tokens: usage.cache_read_tokens,
            output_tokens: usage.output_tokens,
            reasoning_tokens: None,
            cost_usd: None,
        }));
        let event =
            match result.finish_reason.as_str() {
                "completed" => AgentEvent::TurnCompleted {
                    answer: result.text.filter(|answer| !answer.is_empty()),
                },
                // After an interrupt `run_aborted` follows and says why.
                "aborted" => return,
                reason => AgentEvent::TurnFailed {
                    message: self.error.take().or(result.text).unwrap_or_else(|| {
                        format!("cline finished its run with reason `{reason}`")
                    }),
                    http_status: None,
                },
            };
        out.push(event);
    }
}

impl ClineDialect {
    fn tool_started(&mut self, content: Content, out: &mut Vec<AgentEvent>) {
        let command = command(&content.input);
        if let (Some(id), Some(command)) = (&content.tool_call_id, &command) {
            self.commands.insert(id.clone(), command.clone());
        }
        out.push(AgentEvent::ToolStarted {
            id: content.tool_call_id,
            name: content.tool_name.unwrap_or_else(|| "tool".to_owned()),
            command,
        });
    }

    fn ended(&mut self, content: Content, out: &mut Vec<AgentEvent>) {
        match content.content_type {
            ContentType::Text => {
                if let Some(text) = content.text.filter(|text| !text.is_empty()) {
                    out.push(AgentEvent::Text { text, delta: false });
                }
            }
            ContentType::Reasoning => {
                if let Some(text) = content.reasoning.filter(|text| !text.is_empty()) {
                    out.push(AgentEvent::Reasoning { text });
                }
            }
            ContentType::Tool => out.push(AgentEvent::ToolFinished {
                command: content
                    .tool_call_id
                    .as_ref()
                    .and_then(|id| self.commands.remove(id)),
                success: tool_succeeded(&content),
                id: content.tool_call_id,
                name: content.tool_name.unwrap_or_else(|| "tool".to_owned()),
                exit_code: None,
            }),
            ContentType::Other => {}
        }
    }
}

/// The shell commands a `run_commands` call runs, one a line.
fn command(input: &ToolInput) -> Option<String> {
    (!input.commands.is_empty()).then(|| input.commands.join("\n"))
}

/// A refused or failed call has an `error`, or an output that is one (`{"error": …}`) or
/// lists a command that did not succeed.
fn tool_succeeded(content: &Content) -> bool {
    if content.error.is_some() {
        return false;
    }
    match &content.output {
        Some(serde_json::Value::Object(output)) => !output.contains_key("error"),
        Some(serde_json::Value::Array(results)) => results
            .iter()
            .all(|result| result.get("success") != Some(&serde_json::Value::Bool(false))),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::json::{assert_each_malformed, last_usage, parse_all, terminal, texts};

    fn parse(stream: &str) -> Vec<AgentEvent> {
        let (events, issues) = parse_all(&mut ClineDialect::default(), stream);
        assert_eq!(issues, []);
        events
    }

    #[test]
    fn the_result_answers_with_the_runs_usage_cache_reads_inside_the_input() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/cline/plain.jsonl"
        ));
        assert_eq!(texts(&events), ["hello from fake model"]);
        let usage = last_usage(&events).expect("usage");
        assert_eq!(
            (
                usage.input_tokens,
                usage.cached_input_tokens,
                usage.output_tokens
            ),
            (100, 20, 7)
        );
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted {
                answer: Some("hello from fake model".to_owned())
            }]
        );
    }

    #[test]
    fn the_shell_call_finishes_with_its_commands() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/cline/tool_call.jsonl"
        ));
        let command = Some("echo captured-tool-output".to_owned());
        assert!(events.iter().any(|event| matches!(
            event,
            AgentEvent::ToolStarted { name, command: started, .. }
                if name == "run_commands" && *started == command
        )));
        assert!(events.iter().any(|event| matches!(
            event,
            AgentEvent::ToolFinished { command: finished, success: true, .. }
                if *finished == command
        )));
    }

    #[test]
    fn a_refused_call_finishes_as_failed_and_its_error_is_a_notice() {
        let stream = concat!(
            r#"{"type":"agent_event","event":{"type":"content_start","contentType":"tool","toolName":"run_commands","toolCallId":"c1","input":{"commands":["touch x"]}}}"#,
            "\n",
            r#"{"type":"agent_event","event":{"type":"content_end","contentType":"tool","toolName":"run_commands","toolCallId":"c1","output":{"error":"blocked in plan mode"},"error":"blocked"}}"#,
            "\n",
            r#"{"type":"agent_event","event":{"type":"error","error":{"message":"1 tool call(s) failed"},"errorClass":"unknown","recoverable":true}}"#,
        );
        let events = parse(stream);
        assert!(matches!(
            &events[1..],
            [
                AgentEvent::ToolFinished { success: false, command: Some(command), .. },
                AgentEvent::Notice { level: NoticeLevel::Error, .. },
            ] if command == "touch x"
        ));
    }

    #[test]
    fn an_auth_failure_carries_clines_class() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/cline/error_401.jsonl"
        ));
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnFailed { message, http_status: None }]
                if message.contains("scripted failure 401") && message.ends_with("(auth error)")
        ));
    }

    #[test]
    fn an_interrupt_ends_in_no_success_and_no_failure() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/cline/cancelled.jsonl"
        ));
        assert!(
            terminal(&events)
                .iter()
                .all(|event| matches!(event, AgentEvent::TurnAborted { .. })),
            "{events:#?}"
        );
    }

    #[test]
    fn wrongly_shaped_lines_are_malformed() {
        assert_each_malformed::<ClineDialect>(&[
            (r#"{"type":"run_result","finishReason":7}"#, "run_result"),
            (
                r#"{"type":"agent_event","event":{"type":"usage","totalInputTokens":"many"}}"#,
                "agent_event",
            ),
            (
                r#"{"type":"agent_event","event":{"type":"content_end","contentType":5}}"#,
                "agent_event",
            ),
        ]);
    }
}
