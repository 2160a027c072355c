//! pi `--mode json`: a session header (`{"type":"session","id":…}`), then its agent's events:
//! `agent_start`/`agent_end` around a run of the agent loop, `turn_*`, `message_*` (whole
//! messages at `message_end`, pieces in `message_update`) and `tool_execution_*`, and its own
//! retries (`auto_retry_*`). A failed model request is an assistant message with
//! `stopReason: "error"`; pi then retries it (another `agent_start` … `agent_end`) when its
//! words look transient, so the turn ends at an `agent_end` only when no retry follows.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::dialect::json::{Empty, event_type, fields, loose_int, loose_string, sum, unknown};
use crate::dialect::{Dialect, LineIssue};
use crate::event::{AgentEvent, NoticeLevel, Usage};

/// What pi's own retry rule (`_isRetryableError` in its agent session) looks for in an error,
/// compared with spaces, `-` and `_` removed: pi retries these and reports
/// `auto_retry_start` or, once out of attempts, `auto_retry_end` after the `agent_end`.
const RETRIED: &[&str] = &[
    "overloaded",
    "providerreturnederror",
    "ratelimit",
    "toomanyrequests",
    "429",
    "500",
    "502",
    "503",
    "504",
    "serviceunavailable",
    "servererror",
    "internalerror",
    "networkerror",
    "connectionerror",
    "connectionrefused",
    "connectionlost",
    "websocketclosed",
    "websocketerror",
    "othersideclosed",
    "fetchfailed",
    "upstreamconnect",
    "resetbeforeheaders",
    "sockethangup",
    "endedwithout",
    "http2requestdidnotgetaresponse",
    "timedout",
    "timeout",
    "terminated",
    "retrydelay",
];

/// Parser state for one pi run.
#[derive(Debug, Default)]
pub struct PiDialect {
    /// Summed over the run's assistant messages, one per model request.
    usage: Usage,
    /// How the latest assistant message ended.
    last_stop: Option<Stop>,
    /// The shell command of each running tool call, by its id.
    commands: HashMap<String, String>,
}

/// How an assistant message ended, as far as the turn's outcome goes.
#[derive(Debug)]
enum Stop {
    Done,
    Failed(String),
    Aborted(String),
}

#[derive(Deserialize)]
struct Header {
    #[serde(deserialize_with = "loose_string")]
    id: Option<String>,
}

#[derive(Deserialize)]
struct MessageEnd {
    message: Message,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    #[serde(default)]
    role: String,
    #[serde(default)]
    content: Vec<Block>,
    usage: Option<Tokens>,
    #[serde(default, deserialize_with = "loose_string")]
    stop_reason: Option<String>,
    #[serde(default, deserialize_with = "loose_string")]
    error_message: Option<String>,
}

/// A piece of a message's content; tool calls are reported by `tool_execution_*`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum Block {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
    },
    #[serde(other)]
    Other,
}

/// pi's usage of one request: `input` without the cache reads and writes, which it counts apart.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Tokens {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    cost: Option<Cost>,
}

#[derive(Deserialize)]
struct Cost {
    total: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolStart {
    #[serde(default, deserialize_with = "loose_string")]
    tool_call_id: Option<String>,
    #[serde(default, deserialize_with = "loose_string")]
    tool_name: Option<String>,
    args: Option<ToolArgs>,
}

#[derive(Deserialize)]
struct ToolArgs {
    #[serde(default, deserialize_with = "loose_string")]
    command: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolEnd {
    #[serde(default, deserialize_with = "loose_string")]
    tool_call_id: Option<String>,
    #[serde(default, deserialize_with = "loose_string")]
    tool_name: Option<String>,
    is_error: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RetryStart {
    #[serde(default, deserialize_with = "loose_int")]
    attempt: Option<i64>,
    #[serde(default, deserialize_with = "loose_int")]
    max_attempts: Option<i64>,
    #[serde(default, deserialize_with = "loose_string")]
    error_message: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RetryEnd {
    success: Option<bool>,
    #[serde(default, deserialize_with = "loose_string")]
    final_error: Option<String>,
}

/// Whole messages come at `message_end`: the pieces (each with the message so far) and the
/// lifecycle lines carry nothing more, so they are only checked to be JSON (a cut line is an
/// issue, as in every dialect).
const NOT_READ: &[&str] = &[
    "message_update",
    "tool_execution_update",
    "agent_start",
    "turn_start",
    "turn_end",
    "message_start",
];

impl Dialect for PiDialect {
    fn parse_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) -> Result<(), LineIssue> {
        let Some(kind) = event_type(line)? else {
            return Ok(());
        };
        match kind.as_ref() {
            "session" => {
                let Header { id } = fields(line, &kind)?;
                if let Some(session_id) = id {
                    out.push(AgentEvent::SessionStarted {
                        session_id,
                        model: None,
                    });
                }
            }
            "message_end" => {
                let MessageEnd { message } = fields(line, &kind)?;
                self.message_end(message, out);
            }
            "tool_execution_start" => self.tool_started(fields(line, &kind)?, out),
            "tool_execution_end" => self.tool_finished(fields(line, &kind)?, out),
            "agent_end" => {
                let IgnoredAny = fields(line, &kind)?;
                self.agent_end(out);
            }
            "auto_retry_start" => retry(fields(line, &kind)?, out),
            "auto_retry_end" => {
                let RetryEnd {
                    success,
                    final_error,
                } = fields(line, &kind)?;
                if success == Some(false) {
                    out.push(failure(final_error.unwrap_or_default()));
                }
            }
            kind if NOT_READ.contains(&kind) => {
                let IgnoredAny = fields(line, kind)?;
            }
            "queue_update" | "compaction_start" | "compaction_end" => {
                let Empty {} = fields(line, &kind)?;
            }
            _ => return Err(unknown(line, &kind)),
        }
        Ok(())
    }
}

impl PiDialect {
    /// An assistant message: its text, reasoning and usage, and how it ended. Other roles
    /// (the prompt, tool results) say nothing new.
    fn message_end(&mut self, message: Message, out: &mut Vec<AgentEvent>) {
        if message.role != "assistant" {
            return;
        }
        let mut text = String::new();
        for block in message.content {
            match block {
                Block::Text { text: piece } => text.push_str(&piece),
                Block::Thinking { thinking } if !thinking.is_empty() => {
                    out.push(AgentEvent::Reasoning { text: thinking });
                }
                Block::Thinking { .. } | Block::Other => {}
            }
        }
        if !text.is_empty() {
            out.push(AgentEvent::Text { text, delta: false });
        }
        if let Some(tokens) = message.usage {
            self.add_usage(&tokens);
            out.push(AgentEvent::Usage(self.usage));
        }
        let error = message.error_message.unwrap_or_default();
        self.last_stop = Some(match message.stop_reason.as_deref() {
            Some("error") => Stop::Failed(error),
            Some("aborted") => Stop::Aborted(error),
            _ => Stop::Done,
        });
    }

    /// pi's `input` leaves out the cache; the engine's input tokens include it.
    fn add_usage(&mut self, tokens: &Tokens) {
        let usage = &mut self.usage;
        usage.input_tokens = sum(&[
            usage.input_tokens,
            tokens.input,
            tokens.cache_read,
            tokens.cache_write,
        ]);
        usage.cached_input_tokens = sum(&[usage.cached_input_tokens, tokens.cache_read]);
        usage.output_tokens = sum(&[usage.output_tokens, tokens.output]);
        if let Some(cost) = tokens.cost.as_ref().and_then(|cost| cost.total) {
            usage.cost_usd = Some(usage.cost_usd.unwrap_or(0.0) + cost);
        }
    }

    fn tool_started(&mut self, start: ToolStart, out: &mut Vec<AgentEvent>) {
        let command = start.args.and_then(|args| args.command);
        if let (Some(id), Some(command)) = (&start.tool_call_id, &command) {
            self.commands.insert(id.clone(), command.clone());
        }
        out.push(AgentEvent::ToolStarted {
            id: start.tool_call_id,
            name: start.tool_name.unwrap_or_else(|| "tool".to_owned()),
            command,
        });
    }

    /// pi reports no exit code apart: a failed command is a tool error.
    fn tool_finished(&mut self, end: ToolEnd, out: &mut Vec<AgentEvent>) {
        let command = end
            .tool_call_id
            .as_ref()
            .and_then(|id| self.commands.remove(id));
        out.push(AgentEvent::ToolFinished {
            id: end.tool_call_id,
            name: end.tool_name.unwrap_or_else(|| "tool".to_owned()),
            command,
            exit_code: None,
            success: end.is_error != Some(true),
        });
    }

    /// The agent loop stopped: the turn ends with its last assistant message, unless that
    /// failed in a way pi retries (the retry's own lines follow, or `auto_retry_end`).
    fn agent_end(&mut self, out: &mut Vec<AgentEvent>) {
        let event = match self.last_stop.take() {
            Some(Stop::Failed(message)) if retried(&message) => AgentEvent::Notice {
                level: NoticeLevel::Error,
                message,
            },
            Some(Stop::Failed(message)) => failure(message),
            Some(Stop::Aborted(message)) => AgentEvent::TurnAborted {
                message: if message.is_empty() {
                    "the request was aborted".to_owned()
                } else {
                    message
                },
            },
            Some(Stop::Done) | None => AgentEvent::TurnCompleted { answer: None },
        };
        out.push(event);
    }
}

/// Whether pi's own rule retries a failure worded `message`.
fn retried(message: &str) -> bool {
    let squeezed: String = message
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect();
    RETRIED.iter().any(|word| squeezed.contains(word))
}

fn retry(start: RetryStart, out: &mut Vec<AgentEvent>) {
    let count = match (start.attempt, start.max_attempts) {
        (Some(attempt), Some(max)) => format!(" {attempt}/{max}"),
        (Some(attempt), None) => format!(" {attempt}"),
        _ => String::new(),
    };
    let reason = start
        .error_message
        .map(|message| format!(": {message}"))
        .unwrap_or_default();
    out.push(AgentEvent::Notice {
        level: NoticeLevel::Retry,
        message: format!("API retry{count}{reason}"),
    });
}

/// A failed turn. The providers' SDKs begin an HTTP error with its status: `401 {…}`.
fn failure(message: String) -> AgentEvent {
    let http_status = message
        .split_once(' ')
        .and_then(|(status, _)| status.parse::<u16>().ok())
        .filter(|status| (400..=599).contains(status));
    let message = if message.is_empty() {
        "pi reported an error without a message".to_owned()
    } else {
        message
    };
    AgentEvent::TurnFailed {
        message,
        http_status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::json::{
        assert_each_malformed, last_usage, parse_all, parse_every_prefix, terminal,
    };

    fn parse(stream: &str) -> Vec<AgentEvent> {
        let (events, issues) = parse_all(&mut PiDialect::default(), stream);
        assert_eq!(issues, []);
        events
    }

    #[test]
    fn plain_run_yields_session_text_usage_and_completion() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/pi/plain.jsonl"
        ));
        assert!(
            matches!(&events[0], AgentEvent::SessionStarted { session_id, .. } if !session_id.is_empty()),
            "{events:#?}"
        );
        let usage = Usage {
            input_tokens: 120,
            cached_input_tokens: 20,
            output_tokens: 7,
            reasoning_tokens: None,
            cost_usd: Some(0.0),
        };
        assert_eq!(last_usage(&events), Some(usage));
        assert!(events.contains(&AgentEvent::Text {
            text: "hello from fake model".to_owned(),
            delta: false
        }));
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted { answer: None }]
        );
    }

    #[test]
    fn thinking_is_reasoning() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/pi/reasoning.jsonl"
        ));
        assert!(events.contains(&AgentEvent::Reasoning {
            text: "**Thinking** about the answer".to_owned()
        }));
    }

    #[test]
    fn a_shell_call_starts_and_finishes_with_its_command_and_usage_sums_both_requests() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/pi/tool_call.jsonl"
        ));
        let tools: Vec<_> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::ToolStarted { name, command, .. } => {
                    Some(("started", name.as_str(), command.clone(), true))
                }
                AgentEvent::ToolFinished {
                    name,
                    command,
                    success,
                    ..
                } => Some(("finished", name.as_str(), command.clone(), *success)),
                _ => None,
            })
            .collect();
        let command = Some("echo captured-tool-output".to_owned());
        assert_eq!(
            tools,
            [
                ("started", "bash", command.clone(), true),
                ("finished", "bash", command, true)
            ]
        );
        assert_eq!(
            last_usage(&events).map(|usage| usage.input_tokens),
            Some(240)
        );
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted { answer: None }]
        );
    }

    #[test]
    fn an_http_error_fails_with_its_status() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/pi/error_401.jsonl"
        ));
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnFailed { message, http_status: Some(401) }]
                if message.contains("authentication_error")
        ));
    }

    #[test]
    fn a_retried_error_fails_only_when_pi_gives_up() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/pi/error_500.jsonl"
        ));
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnFailed {
                http_status: Some(500),
                ..
            }]
        ));
        let stream = [
            r#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"503 overloaded"}}"#,
            r#"{"type":"agent_end","messages":[]}"#,
            r#"{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 overloaded"}"#,
            r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop"}}"#,
            r#"{"type":"agent_end","messages":[]}"#,
        ]
        .join("\n");
        let events = parse(&stream);
        assert_eq!(
            terminal(&events),
            [&AgentEvent::TurnCompleted { answer: None }]
        );
        assert!(events.iter().any(|event| matches!(
            event,
            AgentEvent::Notice { level: NoticeLevel::Retry, message } if message == "API retry 1/3: 503 overloaded"
        )));
    }

    #[test]
    fn a_cut_stream_fails_in_pis_words() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/pi/stream_cut.jsonl"
        ));
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnFailed { message, http_status: None }]
                if message.contains("stream ended before")
        ));
    }

    #[test]
    fn pis_retry_rule_is_read_as_pi_words_it() {
        assert!(retried("Connection error."));
        assert!(retried("429 Rate-limit reached"));
        assert!(retried("Request timed out"));
        assert!(!retried("401 invalid x-api-key"));
        assert!(!retried("Anthropic stream ended before message_stop"));
    }

    #[test]
    fn a_cut_line_is_an_issue_even_of_a_type_whose_fields_are_not_read() {
        for line in [
            r#"{"type":"message_start""#,
            r#"{"type":"message_update","message":{"role":"#,
            r#"{"type":"turn_end"}}"#,
            r#"{"type":"agent_end""#,
        ] {
            let (events, issues) = parse_all(&mut PiDialect::default(), line);
            assert!(events.is_empty(), "{line}");
            assert_eq!(issues.len(), 1, "{line}: {issues:?}");
        }
    }

    #[test]
    fn wrongly_shaped_lines_are_malformed() {
        assert_each_malformed::<PiDialect>(&[
            (r#"{"type":"message_end"}"#, "message_end"),
            (
                r#"{"type":"message_end","message":{"role":"assistant","content":"hi"}}"#,
                "message_end",
            ),
            (
                r#"{"type":"message_end","message":{"role":"assistant","usage":{"input":"many"}}}"#,
                "message_end",
            ),
            (r#"{"type":"session"}"#, "session"),
            (
                r#"{"type":"tool_execution_end","isError":"yes"}"#,
                "tool_execution_end",
            ),
        ]);
    }

    #[test]
    fn cut_lines_never_panic() {
        let fixtures = [
            include_str!("../../../../tests/fixtures/captures/pi/plain.jsonl"),
            include_str!("../../../../tests/fixtures/captures/pi/reasoning.jsonl"),
            include_str!("../../../../tests/fixtures/captures/pi/tool_call.jsonl"),
            include_str!("../../../../tests/fixtures/captures/pi/resume.jsonl"),
            include_str!("../../../../tests/fixtures/captures/pi/error_401.jsonl"),
            include_str!("../../../../tests/fixtures/captures/pi/error_500.jsonl"),
            include_str!("../../../../tests/fixtures/captures/pi/stream_cut.jsonl"),
            include_str!("../../../../tests/fixtures/captures/pi/cancelled.jsonl"),
        ];
        for fixture in fixtures {
            parse_every_prefix(&mut PiDialect::default(), fixture);
        }
    }
}
