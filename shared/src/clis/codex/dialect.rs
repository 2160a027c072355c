//! codex `exec --json`: `thread.*`, `turn.*` and `item.*` events, each line read by serde: its
//! type first, then the fields of that type, borrowed from the line where the event keeps
//! none of them.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::dialect::json::{Empty, Fields, Scalar, event_type, fields, loose_string, unknown};
use crate::dialect::{Dialect, LineIssue};
use crate::event::{AgentEvent, NoticeLevel, Usage};
use crate::open_calls::OpenCalls;

/// Parser state for one codex run.
#[derive(Debug, Default)]
pub struct CodexDialect {
    /// Ids of tool items already announced, so that a tool codex reports only on completion
    /// (file changes, web searches) still counts as a started call.
    started: OpenCalls,
}

#[derive(Deserialize)]
struct ThreadStarted {
    thread_id: String,
}

#[derive(Deserialize)]
struct ItemLine<'a> {
    #[serde(borrow)]
    item: RawItem<'a>,
}

/// An item as read in one pass, whatever its type: every field some item type uses, each
/// kept loosely and checked once the type is known. (serde's internally tagged enums buffer
/// every field to find the `type`, which is rarely the first key, and that costs more than the
/// rest of the line.)
#[derive(Deserialize)]
struct RawItem<'a> {
    #[serde(rename = "type", borrow)]
    tag: Option<Scalar<'a>>,
    #[serde(borrow)]
    id: Option<Scalar<'a>>,
    #[serde(borrow)]
    text: Option<Scalar<'a>>,
    #[serde(borrow)]
    command: Option<Scalar<'a>>,
    #[serde(borrow)]
    exit_code: Option<Scalar<'a>>,
    #[serde(borrow)]
    status: Option<Scalar<'a>>,
    #[serde(borrow)]
    server: Option<Scalar<'a>>,
    #[serde(borrow)]
    tool: Option<Scalar<'a>>,
    #[serde(borrow)]
    message: Option<Scalar<'a>>,
    #[serde(default, deserialize_with = "loose_string")]
    query: Option<String>,
    #[serde(default, borrow, deserialize_with = "raw")]
    changes: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

/// An item's fields: what its events keep is owned, the rest borrowed from the line.
enum Item<'a> {
    AgentMessage {
        text: String,
    },
    Reasoning {
        text: String,
    },
    CommandExecution {
        id: Option<String>,
        command: String,
        exit_code: Option<i64>,
        status: Option<Cow<'a, str>>,
    },
    FileChange {
        id: Option<String>,
        changes: Vec<Change>,
        status: Option<Cow<'a, str>>,
    },
    McpToolCall {
        id: Option<String>,
        server: Cow<'a, str>,
        tool: Cow<'a, str>,
        status: Option<Cow<'a, str>>,
        error: Option<ErrorBody>,
    },
    WebSearch {
        id: Option<String>,
        query: Option<String>,
    },
    Error {
        message: String,
    },
    /// `todo_list` and item types newer than this parser: nothing the outcome needs.
    Other,
}

/// `#[serde(deserialize_with = "raw")]`: a value kept as text, `null` included.
fn raw<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

impl<'a> Item<'a> {
    /// The item of a line whose type is `kind`, with the field types each item type needs.
    fn read(line: &'a str, kind: &str) -> Result<Self, LineIssue> {
        let item = fields::<ItemLine>(line, kind)?.item;
        let field = Fields { kind };
        let tag = field.required("type", item.tag)?;
        let owned = |text: Option<Cow<str>>| text.map(Cow::into_owned);
        Ok(match tag.as_ref() {
            "agent_message" => Self::AgentMessage {
                text: field.required("text", item.text)?.into_owned(),
            },
            "reasoning" => Self::Reasoning {
                text: field.required("text", item.text)?.into_owned(),
            },
            "command_execution" => Self::CommandExecution {
                id: owned(field.optional("id", item.id)?),
                command: field.required("command", item.command)?.into_owned(),
                exit_code: field.optional_int("exit_code", item.exit_code)?,
                status: field.optional("status", item.status)?,
            },
            "file_change" => Self::FileChange {
                id: owned(field.optional("id", item.id)?),
                changes: match item.changes {
                    Some(changes) => fields(changes.get(), kind)?,
                    None => Vec::new(),
                },
                status: field.optional("status", item.status)?,
            },
            "mcp_tool_call" => Self::McpToolCall {
                id: owned(field.optional("id", item.id)?),
                server: field.required("server", item.server)?,
                tool: field.required("tool", item.tool)?,
                status: field.optional("status", item.status)?,
                error: item
                    .error
                    .map(|error| fields(error.get(), kind))
                    .transpose()?,
            },
            "web_search" => Self::WebSearch {
                id: owned(field.optional("id", item.id)?),
                query: item.query,
            },
            "error" => Self::Error {
                message: field.required("message", item.message)?.into_owned(),
            },
            _ => Self::Other,
        })
    }
}

#[derive(Deserialize)]
struct Change {
    #[serde(default, deserialize_with = "loose_string")]
    kind: Option<String>,
    path: String,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default, deserialize_with = "loose_string")]
    message: Option<String>,
}

#[derive(Deserialize)]
struct TurnCompleted {
    usage: Option<CodexUsage>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CodexUsage {
    input_tokens: u64,
    cached_input_tokens: u64,
    output_tokens: u64,
    reasoning_output_tokens: u64,
}

#[derive(Deserialize)]
struct TurnFailed {
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct ErrorLine {
    message: String,
}

/// A tool call as an item describes it.
#[derive(Clone)]
struct Call {
    id: Option<String>,
    name: String,
    command: Option<String>,
    exit_code: Option<i64>,
    success: bool,
}

impl Call {
    /// A call of a tool that is not a process, so has no exit code.
    fn without_exit_code(
        id: Option<String>,
        name: String,
        command: Option<String>,
        success: bool,
    ) -> Self {
        Self {
            id,
            name,
            command,
            exit_code: None,
            success,
        }
    }

    /// The call's start, from a call that will not finish here (no copies made).
    fn into_started(self) -> AgentEvent {
        AgentEvent::ToolStarted {
            id: self.id,
            name: self.name,
            command: self.command,
        }
    }

    fn started(&self) -> AgentEvent {
        self.clone().into_started()
    }

    fn finished(self) -> AgentEvent {
        AgentEvent::ToolFinished {
            id: self.id,
            name: self.name,
            command: self.command,
            exit_code: self.exit_code,
            success: self.success,
        }
    }
}

impl Item<'_> {
    /// The tool call this item is, if it is one.
    fn into_call(self) -> Option<Call> {
        Some(match self {
            Self::CommandExecution {
                id,
                command,
                exit_code,
                status,
            } => Call {
                success: completed(&status) && exit_code == Some(0),
                id,
                name: "shell".to_owned(),
                command: Some(command),
                exit_code,
            },
            Self::FileChange {
                id,
                changes,
                status,
            } => Call::without_exit_code(
                id,
                "edit".to_owned(),
                Some(describe_changes(&changes)),
                completed(&status),
            ),
            Self::McpToolCall {
                id,
                server,
                tool,
                status,
                error,
            } => Call::without_exit_code(
                id,
                format!("{server}.{tool}"),
                None,
                completed(&status) && error.is_none(),
            ),
            // A search has no status: reaching `item.completed` is its success.
            Self::WebSearch { id, query } => {
                Call::without_exit_code(id, "web_search".to_owned(), query, true)
            }
            Self::AgentMessage { .. }
            | Self::Reasoning { .. }
            | Self::Error { .. }
            | Self::Other => return None,
        })
    }
}

/// Whether an item's status says it completed.
fn completed(status: &Option<Cow<str>>) -> bool {
    status.as_deref() == Some("completed")
}

/// `update src/a.rs, add src/b.rs`: what a file change touched, in one line.
fn describe_changes(changes: &[Change]) -> String {
    let parts: Vec<String> = changes
        .iter()
        .map(|change| match &change.kind {
            Some(kind) => format!("{kind} {}", change.path),
            None => change.path.clone(),
        })
        .collect();
    parts.join(", ")
}

impl Dialect for CodexDialect {
    fn parse_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) -> Result<(), LineIssue> {
        let Some(kind) = event_type(line)? else {
            return Ok(());
        };
        match kind.as_ref() {
            "thread.started" => {
                let ThreadStarted { thread_id } = fields(line, &kind)?;
                out.push(AgentEvent::SessionStarted {
                    session_id: thread_id,
                    model: None,
                });
            }
            "item.started" => self.item_started(Item::read(line, &kind)?, out),
            "item.completed" => self.item_completed(Item::read(line, &kind)?, out),
            "turn.completed" => turn_completed(fields(line, &kind)?, out),
            "turn.failed" => turn_failed(fields(line, &kind)?, out),
            "error" => error(fields(line, &kind)?, out),
            // Known, but nothing the outcome needs: only check that the line is JSON.
            "turn.started" | "item.updated" => {
                let Empty {} = fields(line, &kind)?;
            }
            _ => return Err(unknown(line, &kind)),
        }
        Ok(())
    }
}

impl CodexDialect {
    fn item_started(&mut self, item: Item, out: &mut Vec<AgentEvent>) {
        if let Some(call) = item.into_call() {
            if let Some(id) = &call.id {
                self.started.open(id.clone());
            }
            out.push(call.into_started());
        }
    }

    fn item_completed(&mut self, item: Item, out: &mut Vec<AgentEvent>) {
        match item {
            Item::AgentMessage { text } => out.push(AgentEvent::Text { text, delta: false }),
            Item::Reasoning { text } => out.push(AgentEvent::Reasoning { text }),
            // An error item is codex telling about a problem it works around.
            Item::Error { message } => out.push(AgentEvent::Notice {
                level: NoticeLevel::Warning,
                message,
            }),
            tool => {
                if let Some(call) = tool.into_call() {
                    let announced = call.id.as_ref().is_some_and(|id| self.started.close(id));
                    if !announced {
                        out.push(call.started());
                    }
                    out.push(call.finished());
                }
            }
        }
    }
}

/// The usage codex reports is cumulative over the thread; the engine subtracts earlier runs.
fn turn_completed(turn: TurnCompleted, out: &mut Vec<AgentEvent>) {
    if let Some(usage) = turn.usage {
        out.push(AgentEvent::Usage(Usage {
            input_tokens: usage.input_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            output_tokens: usage.output_tokens,
            reasoning_tokens: Some(usage.reasoning_output_tokens),
            cost_usd: None,
        }));
    }
    out.push(AgentEvent::TurnCompleted { answer: None });
}

fn turn_failed(turn: TurnFailed, out: &mut Vec<AgentEvent>) {
    let message = turn.error.and_then(|error| error.message);
    out.push(AgentEvent::TurnFailed {
        message: message
            .unwrap_or_else(|| "codex reported a failed turn without a message".to_owned()),
        http_status: None,
    });
}

/// A top-level error is not fatal: codex sends the same event for each retry, and before
/// `turn.failed` when it gives up.
fn error(line: ErrorLine, out: &mut Vec<AgentEvent>) {
    let level = if line.message.starts_with("Reconnecting") {
        NoticeLevel::Retry
    } else {
        NoticeLevel::Error
    };
    out.push(AgentEvent::Notice {
        level,
        message: line.message,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::json::{assert_each_malformed, parse_all, parse_every_prefix};

    fn parse(stream: &str) -> (Vec<AgentEvent>, Vec<LineIssue>) {
        parse_all(&mut CodexDialect::default(), stream)
    }

    fn session(id: &str) -> AgentEvent {
        AgentEvent::SessionStarted {
            session_id: id.to_owned(),
            model: None,
        }
    }

    fn text(text: &str) -> AgentEvent {
        AgentEvent::Text {
            text: text.to_owned(),
            delta: false,
        }
    }

    const THREAD: &str = "01a1feac-1aec-7353-bdbc-e6190ef792e3";

    #[test]
    fn plain_run_yields_session_text_usage_and_completion() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/codex/plain.jsonl"
        ));
        assert_eq!(issues, []);
        let usage = Usage {
            input_tokens: 100,
            cached_input_tokens: 20,
            output_tokens: 7,
            reasoning_tokens: Some(3),
            cost_usd: None,
        };
        let expected = [
            session("01a22235-9dbe-7272-a04a-201e5e250112"),
            text("hello from fake model"),
            AgentEvent::Usage(usage),
            AgentEvent::TurnCompleted { answer: None },
        ];
        assert_eq!(events, expected);
    }

    #[test]
    fn reasoning_item_is_reasoning_not_text() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/codex/reasoning.jsonl"
        ));
        assert_eq!(issues, []);
        assert_eq!(
            events[1],
            AgentEvent::Reasoning {
                text: "**Thinking** about the answer".to_owned()
            }
        );
        assert_eq!(events[2], text("hello from fake model"));
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

    #[test]
    fn command_starts_and_finishes_with_its_exit_code() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/codex/tool_call.jsonl"
        ));
        assert_eq!(issues, []);
        let echo = "/bin/bash -lc 'echo captured-tool-output'";
        let expected = [
            &AgentEvent::ToolStarted {
                id: Some("item_0".into()),
                name: "shell".into(),
                command: Some(echo.into()),
            },
            &AgentEvent::ToolFinished {
                id: Some("item_0".into()),
                name: "shell".into(),
                command: Some(echo.into()),
                exit_code: Some(0),
                success: true,
            },
        ];
        assert_eq!(tool_events(&events), expected);
        assert!(events.contains(&text("tool said: captured-tool-output")));
        assert_eq!(
            events.last(),
            Some(&AgentEvent::TurnCompleted { answer: None })
        );
    }

    #[test]
    fn failed_command_finishes_unsuccessfully_with_its_exit_code() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/codex/failed-command.jsonl"
        ));
        assert_eq!(issues, []);
        let touch = "/bin/bash -lc 'touch x'";
        let expected = [
            &AgentEvent::ToolStarted {
                id: Some("item_0".into()),
                name: "shell".into(),
                command: Some(touch.into()),
            },
            &AgentEvent::ToolFinished {
                id: Some("item_0".into()),
                name: "shell".into(),
                command: Some(touch.into()),
                exit_code: Some(1),
                success: false,
            },
        ];
        assert_eq!(tool_events(&events), expected);
        // A failed command does not fail the turn.
        assert_eq!(
            events.last(),
            Some(&AgentEvent::TurnCompleted { answer: None })
        );
    }

    #[test]
    fn reconnecting_error_is_a_retry_notice_not_a_failure() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/codex/reconnecting.jsonl"
        ));
        assert_eq!(issues, []);
        let retry = "Reconnecting... 1/5 (Connection failed: error sending request)";
        assert_eq!(
            events[1],
            AgentEvent::Notice {
                level: NoticeLevel::Retry,
                message: retry.to_owned()
            }
        );
        assert!(!events[1].is_terminal());
        let final_error = AgentEvent::Notice {
            level: NoticeLevel::Error,
            message: "Connection failed: error sending request".to_owned(),
        };
        assert_eq!(events[events.len() - 2], final_error);
        let failed = AgentEvent::TurnFailed {
            message: "Connection failed: error sending request".to_owned(),
            http_status: None,
        };
        assert_eq!(events.last(), Some(&failed));
        assert_eq!(events.iter().filter(|event| event.is_terminal()).count(), 1);
    }

    #[test]
    fn api_error_is_an_error_notice_then_the_failure() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/codex/error_401.jsonl"
        ));
        assert_eq!(issues, []);
        let message = "unexpected status 401 Unauthorized: scripted failure 401, url: http://127.0.0.1:37171/v1/responses";
        let expected = [
            session("01a22235-af07-7390-8c5e-45a79ab5deba"),
            AgentEvent::Notice {
                level: NoticeLevel::Error,
                message: message.to_owned(),
            },
            // codex gives the status only inside its message.
            AgentEvent::TurnFailed {
                message: message.to_owned(),
                http_status: None,
            },
        ];
        assert_eq!(events, expected);
    }

    #[test]
    fn error_item_is_a_warning() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/codex/error-item.jsonl"
        ));
        assert_eq!(issues, []);
        assert!(
            matches!(&events[1], AgentEvent::Notice { level: NoticeLevel::Warning, message } if message.starts_with("Model metadata"))
        );
        assert_eq!(
            events.last(),
            Some(&AgentEvent::TurnCompleted { answer: None })
        );
    }

    #[test]
    fn interrupted_run_has_no_terminal_event() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/codex/cancelled.jsonl"
        ));
        assert_eq!(issues, []);
        // SIGINT ends codex with nothing after `turn.started`.
        assert_eq!(events, [session("01a22235-bf30-7861-bffb-ae1993e9e4eb")]);
        assert!(events.iter().all(|event| !event.is_terminal()));
    }

    #[test]
    fn other_item_types_are_tools_or_nothing() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/codex/other-items.jsonl"
        ));
        assert_eq!(issues, []);
        let finished: Vec<(&str, Option<&str>, bool)> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::ToolFinished {
                    name,
                    command,
                    success,
                    ..
                } => Some((name.as_str(), command.as_deref(), *success)),
                _ => None,
            })
            .collect();
        let expected = [
            ("edit", Some("update src/main.rs, add src/new.rs"), true),
            ("docs.search", None, true),
            ("docs.fetch", None, false),
            ("web_search", Some("rust serde tagged enum"), true),
        ];
        assert_eq!(finished, expected);
        // Every finished tool was started once, announced by codex or not.
        let started = events
            .iter()
            .filter(|event| matches!(event, AgentEvent::ToolStarted { .. }))
            .count();
        assert_eq!(started, expected.len());
    }

    #[test]
    fn unknown_event_type_is_reported_not_fatal() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/codex/unknown-events.jsonl"
        ));
        assert_eq!(
            issues,
            [LineIssue::UnknownType("thread.archived".to_owned())]
        );
        assert_eq!(events.first(), Some(&session(THREAD)));
        assert_eq!(
            events.last(),
            Some(&AgentEvent::TurnCompleted { answer: None })
        );
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let line = r#"{"type":"item.completed","seq":4,"item":{"id":"item_1","type":"agent_message","text":"hi","annotations":[]}}"#;
        assert_eq!(parse(line), (vec![text("hi")], vec![]));
    }

    #[test]
    fn type_need_not_come_first() {
        let line = r#"{"thread_id":"t-1","type":"thread.started"}"#;
        assert_eq!(parse(line), (vec![session("t-1")], vec![]));
    }

    #[test]
    fn garbage_line_is_not_json() {
        for line in [
            "Reading prompt from stdin...",
            "[1,2]",
            "{\"type\":\"turn.started\"",
            "\"type\"",
        ] {
            assert_eq!(parse(line), (vec![], vec![LineIssue::NotJson]), "{line}");
        }
    }

    #[test]
    fn blank_lines_are_skipped() {
        assert_eq!(parse("\n   \n\t\r\n"), (vec![], vec![]));
    }

    #[test]
    fn missing_fields_are_malformed_not_panics() {
        let lines = [
            (r#"{"type":"thread.started"}"#, "thread.started"),
            (
                r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message"}}"#,
                "item.completed",
            ),
            (
                r#"{"type":"item.completed","item":{"id":"item_0"}}"#,
                "item.completed",
            ),
            (r#"{"type":"item.started"}"#, "item.started"),
            (r#"{"type":"error","message":42}"#, "error"),
            (r#"{"id":"x"}"#, ""),
        ];
        assert_each_malformed::<CodexDialect>(&lines);
    }

    #[test]
    fn item_fields_are_typed_by_the_item_type_alone() {
        let wrong = [
            r#"{"type":"item.completed","item":{"id":5,"type":"command_execution","command":"ls"}}"#,
            r#"{"type":"item.completed","item":{"type":"command_execution","command":"ls","exit_code":1.5}}"#,
            r#"{"type":"item.completed","item":{"type":"file_change","changes":null}}"#,
            r#"{"type":"item.completed","item":{"type":"mcp_tool_call","server":"s","tool":"t","error":7}}"#,
            r#"{"type":"item.completed","item":{"type":7}}"#,
        ];
        let lines: Vec<(&str, &str)> = wrong.iter().map(|line| (*line, "item.completed")).collect();
        assert_each_malformed::<CodexDialect>(&lines);
        let (events, issues) = parse(
            r#"{"type":"item.completed","item":{"type":"agent_message","text":"hi","command":5,"changes":null}}"#,
        );
        assert_eq!((events, issues), (vec![text("hi")], vec![]));
    }

    #[test]
    fn turn_failed_without_a_message_still_fails() {
        let (events, _) = parse(r#"{"type":"turn.failed","error":null}"#);
        assert!(matches!(&events[..], [AgentEvent::TurnFailed { .. }]));
    }

    #[test]
    fn cut_lines_never_panic() {
        let fixtures = [
            include_str!("../../../../tests/fixtures/captures/codex/plain.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/reasoning.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/tool_call.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/resume.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/error_400.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/error_401.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/error_429.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/error_500.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/stream_cut.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/connection_refused.jsonl"),
            include_str!("../../../../tests/fixtures/captures/codex/cancelled.jsonl"),
            include_str!("../../../../tests/fixtures/streams/codex/failed-command.jsonl"),
            include_str!("../../../../tests/fixtures/streams/codex/reconnecting.jsonl"),
            include_str!("../../../../tests/fixtures/streams/codex/error-item.jsonl"),
            include_str!("../../../../tests/fixtures/streams/codex/other-items.jsonl"),
            include_str!("../../../../tests/fixtures/streams/codex/unknown-events.jsonl"),
        ];
        for fixture in fixtures {
            parse_every_prefix(&mut CodexDialect::default(), fixture);
        }
    }
}
