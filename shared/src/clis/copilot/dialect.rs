//! copilot `-p --output-format json`: session events `{type, data, id, timestamp, parentId,
//! ephemeral}` with dotted names, and a last `result` line that alone names the session.
//! Whole messages are read (`assistant.message`, `assistant.reasoning`); their `*_delta`
//! pieces are skipped so no text counts twice. Token counts are not on stdout: the engine
//! reads them from the file `--usage-output-file` names (see `usage.rs`).

use std::collections::HashMap;

use serde::Deserialize;

use crate::dialect::json::{
    Empty, event_type, fields, loose_http_status, loose_int, loose_string, unknown,
};
use crate::dialect::{Dialect, LineIssue};
use crate::event::{AgentEvent, NoticeLevel};

/// Parser state for one copilot run.
#[derive(Debug, Default)]
pub struct CopilotDialect {
    /// The model of the latest assistant message: `result` does not name it.
    model: Option<String>,
    /// The latest `session.error`: why a run that exits non-zero failed.
    error: Option<SessionError>,
    /// Tool calls in flight by id: the completion names only the id.
    tools: HashMap<String, Tool>,
    /// The run was interrupted: its `result` then says exit code 0 but ends nothing.
    aborted: bool,
}

#[derive(Debug)]
struct Tool {
    name: String,
    command: Option<String>,
}

#[derive(Deserialize)]
struct Line<T> {
    data: T,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default, deserialize_with = "loose_string")]
    content: Option<String>,
    #[serde(default, deserialize_with = "loose_string")]
    model: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolStart {
    tool_call_id: String,
    #[serde(default, deserialize_with = "loose_string")]
    tool_name: Option<String>,
    #[serde(default)]
    arguments: ToolArguments,
}

#[derive(Default, Deserialize)]
struct ToolArguments {
    #[serde(default, deserialize_with = "loose_string")]
    command: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolComplete {
    tool_call_id: String,
    success: Option<bool>,
    shell_execution: Option<ShellExecution>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ShellExecution {
    #[serde(default, deserialize_with = "loose_int")]
    exit_code: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionError {
    #[serde(default, deserialize_with = "loose_string")]
    message: Option<String>,
    #[serde(default, deserialize_with = "loose_http_status")]
    status_code: Option<u16>,
}

#[derive(Deserialize)]
struct Retry {
    #[serde(default, deserialize_with = "loose_string")]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct Abort {
    #[serde(default, deserialize_with = "loose_string")]
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultLine {
    session_id: String,
    #[serde(default, deserialize_with = "loose_int")]
    exit_code: Option<i64>,
}

impl Dialect for CopilotDialect {
    fn parse_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) -> Result<(), LineIssue> {
        let Some(kind) = event_type(line)? else {
            return Ok(());
        };
        match kind.as_ref() {
            "assistant.message" => self.message(data(line, &kind)?, out),
            "assistant.reasoning" => {
                let reasoning: Message = data(line, &kind)?;
                if let Some(text) = reasoning.content.filter(|text| !text.is_empty()) {
                    out.push(AgentEvent::Reasoning { text });
                }
            }
            "tool.execution_start" => self.tool_started(data(line, &kind)?, out),
            "tool.execution_complete" => self.tool_finished(data(line, &kind)?, out),
            "session.error" => self.error = Some(data(line, &kind)?),
            "assistant.turn_retry" => {
                let retry: Retry = data(line, &kind)?;
                out.push(AgentEvent::Notice {
                    level: NoticeLevel::Retry,
                    message: format!(
                        "model call retried: {}",
                        retry.reason.as_deref().unwrap_or("unknown")
                    ),
                });
            }
            "abort" => {
                let abort: Abort = data(line, &kind)?;
                self.aborted = true;
                out.push(AgentEvent::TurnAborted {
                    message: abort.reason.unwrap_or_else(|| "aborted".to_owned()),
                });
            }
            "result" => self.result(fields(line, &kind)?, out),
            kind if PROGRESS_ONLY.contains(&kind) => {
                let Empty {} = fields(line, kind)?;
            }
            _ => return Err(unknown(line, &kind)),
        }
        Ok(())
    }
}

/// Events that say nothing the outcome needs: setup, per-call bookkeeping, the deltas of
/// whole messages read elsewhere, and retry details `assistant.turn_retry` already gives.
const PROGRESS_ONLY: &[&str] = &[
    "session.skills_loaded",
    "session.mcp_servers_loaded",
    "session.tools_updated",
    "session.background_tasks_changed",
    "session.info",
    "user.message",
    "assistant.turn_start",
    "assistant.turn_end",
    "assistant.idle",
    "assistant.message_start",
    "assistant.message_delta",
    "assistant.reasoning_delta",
    "assistant.tool_call_delta",
    "tool.shell_output",
    "tool.execution_partial_result",
    "model.call_start",
    "model.call_finished",
    "model.call_failure",
    "model.call_final_result",
    "agent.interrupted",
];

/// The `data` of a line whose type is `kind`.
fn data<'a, T: Deserialize<'a>>(line: &'a str, kind: &str) -> Result<T, LineIssue> {
    fields::<Line<T>>(line, kind).map(|line| line.data)
}

impl CopilotDialect {
    fn message(&mut self, message: Message, out: &mut Vec<AgentEvent>) {
        if message.model.is_some() {
            self.model = message.model;
        }
        // A message that only requests tools has empty content. The last text is the answer.
        if let Some(text) = message.content.filter(|text| !text.is_empty()) {
            out.push(AgentEvent::Text { text, delta: false });
        }
    }

    fn tool_started(&mut self, start: ToolStart, out: &mut Vec<AgentEvent>) {
        let name = start.tool_name.unwrap_or_else(|| "tool".to_owned());
        out.push(AgentEvent::ToolStarted {
            id: Some(start.tool_call_id.clone()),
            name: name.clone(),
            command: start.arguments.command.clone(),
        });
        let tool = Tool {
            name,
            command: start.arguments.command,
        };
        self.tools.insert(start.tool_call_id, tool);
    }

    fn tool_finished(&mut self, complete: ToolComplete, out: &mut Vec<AgentEvent>) {
        let tool = self.tools.remove(&complete.tool_call_id);
        let (name, command) = tool.map_or_else(
            || ("tool".to_owned(), None),
            |tool| (tool.name, tool.command),
        );
        out.push(AgentEvent::ToolFinished {
            id: Some(complete.tool_call_id),
            name,
            command,
            exit_code: complete.shell_execution.and_then(|shell| shell.exit_code),
            success: complete.success == Some(true),
        });
    }

    fn result(&mut self, result: ResultLine, out: &mut Vec<AgentEvent>) {
        out.push(AgentEvent::SessionStarted {
            session_id: result.session_id,
            model: self.model.take(),
        });
        if self.aborted {
            return;
        }
        let event = match (result.exit_code, self.error.take()) {
            (Some(0), _) => AgentEvent::TurnCompleted { answer: None },
            (code, error) => {
                let error = error.unwrap_or(SessionError {
                    message: None,
                    status_code: None,
                });
                AgentEvent::TurnFailed {
                    message: error.message.unwrap_or_else(|| match code {
                        Some(code) => format!("copilot ended its session with exit code {code}"),
                        None => "copilot ended its session without an exit code".to_owned(),
                    }),
                    http_status: error.status_code,
                }
            }
        };
        out.push(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::json::{assert_each_malformed, parse_all, terminal, texts};

    fn parse(stream: &str) -> Vec<AgentEvent> {
        let (events, issues) = parse_all(&mut CopilotDialect::default(), stream);
        assert_eq!(issues, []);
        events
    }

    #[test]
    fn the_shell_call_finishes_with_its_exit_code_and_the_last_message_answers() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/copilot/tool_call.jsonl"
        ));
        assert!(events.iter().any(|event| matches!(
            event,
            AgentEvent::ToolFinished { name, command: Some(command), exit_code: Some(0), success: true, .. }
                if name == "bash" && command == "echo captured-tool-output"
        )));
        assert_eq!(texts(&events), ["tool said: captured-tool-output"]);
        assert!(matches!(
            &events[events.len() - 2..],
            [AgentEvent::SessionStarted { model: Some(model), .. }, AgentEvent::TurnCompleted { answer: None }]
                if model == "gpt-5.4"
        ));
    }

    #[test]
    fn a_failed_session_reports_its_error_and_status() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/copilot/error_401.jsonl"
        ));
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnFailed { message, http_status: Some(401) }]
                if message.contains("Authentication failed")
        ));
    }

    #[test]
    fn an_interrupt_aborts_and_the_result_after_it_ends_nothing() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/copilot/cancelled.jsonl"
        ));
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnAborted { .. }]
        ));
        assert!(matches!(
            events.last(),
            Some(AgentEvent::SessionStarted { .. })
        ));
    }

    #[test]
    fn wrongly_shaped_lines_are_malformed() {
        assert_each_malformed::<CopilotDialect>(&[
            (r#"{"type":"result","exitCode":0}"#, "result"),
            (
                r#"{"type":"tool.execution_start","data":{}}"#,
                "tool.execution_start",
            ),
            (r#"{"type":"assistant.message"}"#, "assistant.message"),
        ]);
    }
}
