//! claude `-p --output-format stream-json --verbose`: `system`, `assistant`, `user` and
//! `result` events.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, Visitor};

use crate::dialect::json::{
    Empty, Scalar, event_type, fields, loose_http_status, loose_int, loose_string, sum, unknown,
};
use crate::dialect::{Dialect, LineIssue};
use crate::event::Usage;
use crate::event::{AgentEvent, NoticeLevel};

/// Parser state for one claude run.
#[derive(Debug, Default)]
pub struct ClaudeDialect {
    /// Tool calls in flight by id: a `tool_result` names only the id.
    tools: HashMap<String, Tool>,
}

#[derive(Debug)]
struct Tool {
    name: String,
    command: Option<String>,
}

/// The model claude writes on the assistant message it makes up for an API error.
const SYNTHETIC_MODEL: &str = "<synthetic>";

#[derive(Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
enum System {
    Init {
        session_id: String,
        #[serde(default, deserialize_with = "loose_string")]
        model: Option<String>,
    },
    ApiRetry {
        #[serde(default, deserialize_with = "loose_int")]
        attempt: Option<i64>,
        #[serde(default, deserialize_with = "loose_int")]
        max_retries: Option<i64>,
        #[serde(default, deserialize_with = "loose_string")]
        error: Option<String>,
    },
    /// `status`, `thinking_tokens`, `task_started`, `task_notification`, …: progress only.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct Assistant {
    message: AssistantMessage,
}

#[derive(Deserialize)]
struct AssistantMessage {
    #[serde(default, deserialize_with = "loose_string")]
    model: Option<String>,
    #[serde(default)]
    content: Vec<AssistantBlock>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AssistantBlock {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: ToolInput,
    },
    #[serde(other)]
    Other,
}

#[derive(Default, Deserialize)]
struct ToolInput {
    #[serde(default, deserialize_with = "loose_string")]
    command: Option<String>,
}

#[derive(Deserialize)]
struct User {
    message: Option<UserMessage>,
}

#[derive(Deserialize)]
struct UserMessage {
    #[serde(default, deserialize_with = "blocks_or_nothing")]
    content: Vec<UserBlock>,
}

/// A block of a user message. Flat rather than tagged so that a tool's output, the bulk of
/// these lines, is skipped instead of buffered; only `tool_result` blocks matter, and an
/// interrupt's text block gives no event.
#[derive(Deserialize)]
struct UserBlock {
    #[serde(rename = "type", default, deserialize_with = "loose_string")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "loose_string")]
    tool_use_id: Option<String>,
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct ResultLine<'a> {
    #[serde(default)]
    subtype: String,
    is_error: Option<bool>,
    #[serde(default, deserialize_with = "loose_http_status")]
    api_error_status: Option<u16>,
    #[serde(default, deserialize_with = "loose_string")]
    result: Option<String>,
    total_cost_usd: Option<f64>,
    usage: Option<ResultUsage>,
    #[serde(rename = "modelUsage")]
    model_usage: Option<HashMap<String, ModelUsage>>,
    #[serde(default, borrow)]
    errors: Vec<Scalar<'a>>,
    #[serde(default, deserialize_with = "loose_string")]
    terminal_reason: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ResultUsage {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ModelUsage {
    input_tokens: u64,
    cache_read_input_tokens: u64,
    cache_creation_input_tokens: u64,
    output_tokens: u64,
}

impl Dialect for ClaudeDialect {
    fn parse_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) -> Result<(), LineIssue> {
        let Some(kind) = event_type(line)? else {
            return Ok(());
        };
        match kind.as_ref() {
            "system" => system(fields(line, &kind)?, out),
            "assistant" => self.assistant(fields(line, &kind)?, out),
            "user" => self.user(fields(line, &kind)?, out),
            "result" => result(fields(line, &kind)?, out),
            // Partial messages repeat what the `assistant` events say in whole: ignored, so
            // text is not counted twice.
            "stream_event" => {
                let Empty {} = fields(line, &kind)?;
            }
            _ => return Err(unknown(line, &kind)),
        }
        Ok(())
    }
}

fn system(system: System, out: &mut Vec<AgentEvent>) {
    match system {
        System::Init { session_id, model } => {
            out.push(AgentEvent::SessionStarted { session_id, model })
        }
        System::ApiRetry {
            attempt,
            max_retries,
            error,
        } => {
            let show = |n: Option<i64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
            let message = format!(
                "API retry {}/{}: {}",
                show(attempt),
                show(max_retries),
                error.as_deref().unwrap_or("unknown")
            );
            out.push(AgentEvent::Notice {
                level: NoticeLevel::Retry,
                message,
            });
        }
        System::Other => {}
    }
}

impl ClaudeDialect {
    fn assistant(&mut self, assistant: Assistant, out: &mut Vec<AgentEvent>) {
        let synthetic = assistant.message.model.as_deref() == Some(SYNTHETIC_MODEL);
        for block in assistant.message.content {
            match block {
                // Claude writes an API error as a made-up assistant message: it is no answer.
                AssistantBlock::Text { text } if synthetic => {
                    out.push(AgentEvent::Notice {
                        level: NoticeLevel::Error,
                        message: text,
                    });
                }
                AssistantBlock::Text { text } => out.push(AgentEvent::Text { text, delta: false }),
                AssistantBlock::Thinking { thinking } => {
                    out.push(AgentEvent::Reasoning { text: thinking })
                }
                AssistantBlock::ToolUse { id, name, input } => {
                    out.push(AgentEvent::ToolStarted {
                        id: Some(id.clone()),
                        name: name.clone(),
                        command: input.command.clone(),
                    });
                    self.tools.insert(
                        id,
                        Tool {
                            name,
                            command: input.command,
                        },
                    );
                }
                AssistantBlock::Other => {}
            }
        }
    }

    fn user(&mut self, user: User, out: &mut Vec<AgentEvent>) {
        let blocks = user
            .message
            .map(|message| message.content)
            .unwrap_or_default();
        for block in blocks {
            if block.kind.as_deref() != Some("tool_result") {
                continue;
            }
            let tool = block
                .tool_use_id
                .as_ref()
                .and_then(|id| self.tools.remove(id));
            let (name, command) = tool.map_or_else(
                || ("tool".to_owned(), None),
                |tool| (tool.name, tool.command),
            );
            out.push(AgentEvent::ToolFinished {
                id: block.tool_use_id,
                name,
                command,
                exit_code: None,
                success: block.is_error != Some(true),
            });
        }
    }
}

fn result(result: ResultLine<'_>, out: &mut Vec<AgentEvent>) {
    out.push(AgentEvent::Usage(result.normalised_usage()));
    let is_error = result.is_error == Some(true);
    let event = match result.subtype.as_str() {
        // An empty answer is left to the engine, which falls back to the last text block.
        "success" if !is_error => AgentEvent::TurnCompleted {
            answer: result.result.filter(|answer| !answer.is_empty()),
        },
        // An API error: claude gave up on the request.
        "success" => AgentEvent::TurnFailed {
            message: result
                .result
                .unwrap_or_else(|| "claude reported an API error without a message".to_owned()),
            http_status: result.api_error_status,
        },
        _ => AgentEvent::TurnAborted {
            message: result.abort_reason(),
        },
    };
    out.push(event);
}

/// Input (with cache reads and writes), cached input and output tokens.
#[derive(Clone, Copy, Default)]
struct Counts {
    input: u64,
    cached: u64,
    output: u64,
}

impl Counts {
    fn add(self, other: Counts) -> Counts {
        Counts {
            input: sum(&[self.input, other.input]),
            cached: sum(&[self.cached, other.cached]),
            output: sum(&[self.output, other.output]),
        }
    }
}

impl ResultUsage {
    /// Claude's `input_tokens` leaves out cache reads and writes.
    fn counts(&self) -> Counts {
        Counts {
            input: sum(&[
                self.input_tokens,
                self.cache_creation_input_tokens,
                self.cache_read_input_tokens,
            ]),
            cached: self.cache_read_input_tokens,
            output: self.output_tokens,
        }
    }
}

impl ModelUsage {
    fn counts(&self) -> Counts {
        Counts {
            input: sum(&[
                self.input_tokens,
                self.cache_creation_input_tokens,
                self.cache_read_input_tokens,
            ]),
            cached: self.cache_read_input_tokens,
            output: self.output_tokens,
        }
    }
}

impl ResultLine<'_> {
    fn normalised_usage(&self) -> Usage {
        let reported = self
            .usage
            .as_ref()
            .map(ResultUsage::counts)
            .unwrap_or_default();
        let counts = match &self.model_usage {
            // After it recovered a cut stream, claude 2.1.197 reported zero `usage` but real
            // `modelUsage` (2.1.332 counts both requests in `usage`).
            Some(models) if reported.input == 0 && reported.output == 0 => models
                .values()
                .map(ModelUsage::counts)
                .fold(Counts::default(), Counts::add),
            _ => reported,
        };
        Usage {
            input_tokens: counts.input,
            cached_input_tokens: counts.cached,
            output_tokens: counts.output,
            reasoning_tokens: None,
            cost_usd: self.total_cost_usd,
        }
    }

    /// Why claude stopped the turn: its `errors`, else the terminal reason, else the subtype.
    fn abort_reason(self) -> String {
        let errors: Vec<String> = self
            .errors
            .into_iter()
            .filter_map(Scalar::into_string)
            .collect();
        if !errors.is_empty() {
            return errors.join("; ");
        }
        if let Some(reason) = self.terminal_reason {
            return reason;
        }
        match self.subtype.as_str() {
            "" | "error_during_execution" => "aborted".to_owned(),
            other => other.to_owned(),
        }
    }
}

/// A message's `content`: its blocks, or nothing when it is a plain string.
fn blocks_or_nothing<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Blocks<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Blocks<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of content blocks or a string")
        }

        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut blocks = Vec::new();
            while let Some(block) = seq.next_element()? {
                blocks.push(block);
            }
            Ok(blocks)
        }

        fn visit_str<E: de::Error>(self, _: &str) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }

        fn visit_unit<E: de::Error>(self) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }

        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Vec<T>, A::Error> {
            IgnoredAny.visit_map(map).map(|_| Vec::new())
        }
    }

    deserializer.deserialize_any(Blocks(PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::json::{
        assert_each_malformed, last_usage, parse_all, parse_every_prefix, terminal, texts,
    };

    fn parse(stream: &str) -> (Vec<AgentEvent>, Vec<LineIssue>) {
        parse_all(&mut ClaudeDialect::default(), stream)
    }

    #[test]
    fn plain_run_yields_session_text_usage_and_completion() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/claude/plain.jsonl"
        ));
        assert_eq!(issues, []);
        let expected = [
            AgentEvent::SessionStarted {
                session_id: "979085e6-abed-4689-8d30-ddb92936bcf7".to_owned(),
                model: Some("claude-opus-5-5".to_owned()),
            },
            AgentEvent::Text {
                text: "hello from fake model".to_owned(),
                delta: false,
            },
            AgentEvent::Usage(Usage {
                input_tokens: 120,
                cached_input_tokens: 20,
                output_tokens: 7,
                reasoning_tokens: None,
                cost_usd: Some(0.000544),
            }),
            AgentEvent::TurnCompleted {
                answer: Some("hello from fake model".to_owned()),
            },
        ];
        assert_eq!(events, expected);
    }

    #[test]
    fn thinking_block_is_reasoning() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/claude/reasoning.jsonl"
        ));
        assert_eq!(issues, []);
        assert_eq!(
            events[1],
            AgentEvent::Reasoning {
                text: "**Thinking** about the answer".to_owned()
            }
        );
        assert_eq!(
            events[2],
            AgentEvent::Text {
                text: "hello from fake model".to_owned(),
                delta: false
            }
        );
    }

    #[test]
    fn tool_result_finishes_the_tool_its_id_names() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/claude/tool_call.jsonl"
        ));
        assert_eq!(issues, []);
        let expected = [
            AgentEvent::ToolStarted {
                id: Some("toolu_4".to_owned()),
                name: "Bash".to_owned(),
                command: Some("echo captured-tool-output".to_owned()),
            },
            AgentEvent::ToolFinished {
                id: Some("toolu_4".to_owned()),
                name: "Bash".to_owned(),
                command: Some("echo captured-tool-output".to_owned()),
                exit_code: None,
                success: true,
            },
        ];
        assert_eq!(events[1..3], expected);
        // Both requests of the turn, the cached tokens included.
        assert_eq!(
            last_usage(&events).map(|usage| usage.input_tokens),
            Some(240)
        );
    }

    #[test]
    fn error_tool_result_finishes_the_tool_as_failed() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/claude/failed-tool.jsonl"
        ));
        assert_eq!(issues, []);
        let expected = [
            AgentEvent::ToolStarted {
                id: Some("toolu_5c0d17".to_owned()),
                name: "Read".to_owned(),
                command: None,
            },
            AgentEvent::ToolFinished {
                id: Some("toolu_5c0d17".to_owned()),
                name: "Read".to_owned(),
                command: None,
                exit_code: None,
                success: false,
            },
        ];
        assert_eq!(events[1..3], expected);
        // A failed tool does not fail the turn.
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnCompleted { .. }]
        ));
    }

    #[test]
    fn result_for_an_unseen_tool_falls_back_to_a_generic_name() {
        let line = r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_x","type":"tool_result","content":[{"type":"text","text":"hi"}],"is_error":true}]}}"#;
        let finished = AgentEvent::ToolFinished {
            id: Some("toolu_x".to_owned()),
            name: "tool".to_owned(),
            command: None,
            exit_code: None,
            success: false,
        };
        assert_eq!(parse(line), (vec![finished], vec![]));
    }

    #[test]
    fn synthetic_api_error_is_not_an_answer() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/claude/error_429.jsonl"
        ));
        assert_eq!(issues, []);
        assert!(
            !events
                .iter()
                .any(|event| matches!(event, AgentEvent::Text { .. }))
        );
        let notice = AgentEvent::Notice {
            level: NoticeLevel::Error,
            message: "API Error: Request rejected (429) · scripted failure 429".to_owned(),
        };
        assert!(events.contains(&notice));
        let failed = AgentEvent::TurnFailed {
            message: "API Error: Request rejected (429) · scripted failure 429".to_owned(),
            http_status: Some(429),
        };
        assert_eq!(terminal(&events), [&failed]);
    }

    #[test]
    fn api_retries_are_retry_notices() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/claude/retry.jsonl"
        ));
        assert_eq!(issues, []);
        let retries: Vec<&AgentEvent> = events
            .iter()
            .filter(|event| {
                matches!(
                    event,
                    AgentEvent::Notice {
                        level: NoticeLevel::Retry,
                        ..
                    }
                )
            })
            .collect();
        let first = AgentEvent::Notice {
            level: NoticeLevel::Retry,
            message: "API retry 1/10: unknown".to_owned(),
        };
        assert_eq!(retries.len(), 2);
        assert_eq!(retries[0], &first);
        let failed = AgentEvent::TurnFailed {
            message: "API Error: Unable to connect to API (ConnectionRefused)".to_owned(),
            http_status: None,
        };
        assert_eq!(terminal(&events), [&failed]);
    }

    #[test]
    fn interrupted_run_is_aborted_with_claudes_reason() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/claude/cancelled.jsonl"
        ));
        assert_eq!(issues, []);
        let aborted = AgentEvent::TurnAborted {
            message: "[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"
                .to_owned(),
        };
        assert_eq!(terminal(&events), [&aborted]);
        // What the model said before the interrupt is text; the interrupt's own text block
        // is no answer.
        assert_eq!(texts(&events), ["tick 0 "]);
    }

    #[test]
    fn interrupted_tool_finishes_as_failed() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/claude/interrupted-tool.jsonl"
        ));
        assert_eq!(issues, []);
        let killed = AgentEvent::ToolFinished {
            id: Some("toolu_e4a3f0".to_owned()),
            name: "Bash".to_owned(),
            command: Some("sleep 600".to_owned()),
            exit_code: None,
            success: false,
        };
        assert!(events.contains(&killed), "{events:#?}");
        assert!(texts(&events).is_empty());
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnAborted { .. }]
        ));
    }

    #[test]
    fn abort_reason_falls_back_to_terminal_reason_then_aborted() {
        let with_reason = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"aborted_streaming","errors":[]}"#;
        let bare = r#"{"type":"result","subtype":"error_during_execution","is_error":true}"#;
        let max_turns = r#"{"type":"result","subtype":"error_max_turns","is_error":true}"#;
        for (line, message) in [
            (with_reason, "aborted_streaming"),
            (bare, "aborted"),
            (max_turns, "error_max_turns"),
        ] {
            let (events, issues) = parse(line);
            assert_eq!(issues, []);
            assert_eq!(
                terminal(&events),
                [&AgentEvent::TurnAborted {
                    message: message.to_owned()
                }]
            );
        }
    }

    #[test]
    fn zero_usage_falls_back_to_model_usage() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/claude/usage-quirk.jsonl"
        ));
        assert_eq!(issues, []);
        let expected = Usage {
            input_tokens: 330,
            cached_input_tokens: 40,
            output_tokens: 19,
            reasoning_tokens: None,
            cost_usd: Some(0.0021),
        };
        assert_eq!(last_usage(&events), Some(expected));
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted {
                answer: Some("recovered answer".to_owned())
            }]
        );
    }

    #[test]
    fn retried_cut_stream_completes_with_the_usage_of_both_requests() {
        // claude repeats a cut request without streaming, and its result counts both (2.1.197
        // reported zero `usage` there: zero_usage_falls_back_to_model_usage).
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/captures/claude/stream_cut.jsonl"
        ));
        assert_eq!(issues, []);
        let expected = Usage {
            input_tokens: 240,
            cached_input_tokens: 40,
            output_tokens: 8,
            reasoning_tokens: None,
            cost_usd: Some(0.001088),
        };
        assert_eq!(last_usage(&events), Some(expected));
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted {
                answer: Some("hello from fake model".to_owned())
            }]
        );
    }

    #[test]
    fn progress_subtypes_and_stream_events_give_nothing() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/claude/progress.jsonl"
        ));
        assert_eq!(issues, []);
        let texts = events
            .iter()
            .filter(|event| matches!(event, AgentEvent::Text { .. }))
            .count();
        assert_eq!(texts, 1);
    }

    #[test]
    fn unknown_event_type_is_reported_not_fatal() {
        let (events, issues) = parse(include_str!(
            "../../../../tests/fixtures/streams/claude/unknown-events.jsonl"
        ));
        assert_eq!(
            issues,
            [LineIssue::UnknownType("rate_limit_event".to_owned())]
        );
        assert_eq!(terminal(&events).len(), 1);
    }

    #[test]
    fn garbage_line_is_not_json() {
        for line in ["Error: not logged in", "{\"type\":\"result\",", "42"] {
            assert_eq!(parse(line), (vec![], vec![LineIssue::NotJson]), "{line}");
        }
    }

    #[test]
    fn missing_fields_are_malformed_not_panics() {
        let lines = [
            (r#"{"type":"system","subtype":"init"}"#, "system"),
            (r#"{"type":"system"}"#, "system"),
            (r#"{"type":"assistant"}"#, "assistant"),
            (
                r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t"}]}}"#,
                "assistant",
            ),
            (r#"{"type":"result","usage":7}"#, "result"),
        ];
        assert_each_malformed::<ClaudeDialect>(&lines);
    }

    #[test]
    fn string_content_and_odd_field_shapes_are_tolerated() {
        let lines = [
            r#"{"type":"user","message":{"role":"user","content":"plain prompt"}}"#,
            r#"{"type":"system","subtype":"api_retry","attempt":"2","max_retries":null,"error":{"kind":"x"}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":["ls"]}}]}}"#,
        ];
        for line in lines {
            let (_, issues) = parse(line);
            assert_eq!(issues, [], "{line}");
        }
    }

    #[test]
    fn cut_lines_never_panic() {
        let fixtures = [
            include_str!("../../../../tests/fixtures/captures/claude/plain.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/reasoning.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/tool_call.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/resume.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/error_400.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/error_401.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/error_429.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/error_500.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/stream_cut.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/connection_refused.jsonl"),
            include_str!("../../../../tests/fixtures/captures/claude/cancelled.jsonl"),
            include_str!("../../../../tests/fixtures/streams/claude/failed-tool.jsonl"),
            include_str!("../../../../tests/fixtures/streams/claude/interrupted-tool.jsonl"),
            include_str!("../../../../tests/fixtures/streams/claude/retry.jsonl"),
            include_str!("../../../../tests/fixtures/streams/claude/usage-quirk.jsonl"),
            include_str!("../../../../tests/fixtures/streams/claude/progress.jsonl"),
            include_str!("../../../../tests/fixtures/streams/claude/unknown-events.jsonl"),
        ];
        for fixture in fixtures {
            parse_every_prefix(&mut ClaudeDialect::default(), fixture);
        }
    }
}
