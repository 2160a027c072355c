//! qwen `--output-format stream-json`: claude's stream-json, which qwen-code adopted, with
//! three differences handled here. Its `result` reports an error in `error.message` (claude:
//! `result` or `errors`), its retries are `system/retry` with the counts under `data`, and its
//! usage counts cached input inside `input_tokens` (claude adds cache reads on top). It also
//! writes an API error as an assistant text `[API Error: …]`: a notice, not an answer.
//! Assistant, user and stream lines are claude's and go to claude's parser.

use serde::Deserialize;

use crate::clis::claude::dialect::ClaudeDialect;
use crate::dialect::json::{event_type, fields, loose_int, loose_string};
use crate::dialect::{Dialect, LineIssue};
use crate::event::Usage;
use crate::event::{AgentEvent, NoticeLevel};

/// Parser state for one qwen run: claude's, for the lines the two share.
#[derive(Debug, Default)]
pub struct QwenDialect {
    claude: ClaudeDialect,
}

/// A `system` line: qwen's retry notice, else claude's (`init`, …).
#[derive(Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
enum System {
    Retry {
        #[serde(default)]
        data: Retry,
    },
    #[serde(other)]
    Claude,
}

#[derive(Default, Deserialize)]
struct Retry {
    #[serde(default, deserialize_with = "loose_int")]
    attempt: Option<i64>,
    #[serde(default, rename = "maxRetries", deserialize_with = "loose_int")]
    max_retries: Option<i64>,
}

#[derive(Deserialize)]
struct ResultLine {
    is_error: Option<bool>,
    #[serde(default)]
    subtype: String,
    #[serde(default, deserialize_with = "loose_string")]
    result: Option<String>,
    error: Option<ResultError>,
    #[serde(default)]
    usage: ResultUsage,
}

#[derive(Deserialize)]
struct ResultError {
    #[serde(default, deserialize_with = "loose_string")]
    message: Option<String>,
}

/// `input_tokens` already holds the cache reads, as in OpenAI's `prompt_tokens`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ResultUsage {
    input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

impl Dialect for QwenDialect {
    fn parse_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) -> Result<(), LineIssue> {
        let Some(kind) = event_type(line)? else {
            return Ok(());
        };
        match kind.as_ref() {
            "system" => match fields(line, &kind)? {
                System::Retry { data } => retry(data, out),
                System::Claude => self.claude.parse_line(line, out)?,
            },
            "result" => result(fields(line, &kind)?, out),
            _ => {
                let first = out.len();
                self.claude.parse_line(line, out)?;
                api_errors_to_notices(&mut out[first..]);
            }
        }
        Ok(())
    }
}

fn retry(data: Retry, out: &mut Vec<AgentEvent>) {
    let count = match (data.attempt, data.max_retries) {
        (Some(attempt), Some(max)) => format!(" {attempt}/{max}"),
        (Some(attempt), None) => format!(" {attempt}"),
        _ => String::new(),
    };
    out.push(AgentEvent::Notice {
        level: NoticeLevel::Retry,
        message: format!("API retry{count}"),
    });
}

/// qwen appends `[API Error: <message>]` to the assistant text of a failed request.
fn api_errors_to_notices(events: &mut [AgentEvent]) {
    for event in events {
        if let AgentEvent::Text { text, .. } = event
            && text.ends_with(']')
            && text.contains("[API Error: ")
        {
            *event = AgentEvent::Notice {
                level: NoticeLevel::Error,
                message: std::mem::take(text),
            };
        }
    }
}

fn result(result: ResultLine, out: &mut Vec<AgentEvent>) {
    let usage = result.usage;
    out.push(AgentEvent::Usage(Usage {
        input_tokens: usage.input_tokens,
        cached_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens,
        reasoning_tokens: None,
        cost_usd: None,
    }));
    let event = if result.is_error == Some(true) {
        // The HTTP status, when there is one, is in the message: `[API Error: 401 …]`.
        let message = result
            .error
            .and_then(|error| error.message)
            .or(result.result)
            .unwrap_or(result.subtype);
        AgentEvent::TurnFailed {
            message,
            http_status: None,
        }
    } else {
        AgentEvent::TurnCompleted {
            answer: result.result.filter(|answer| !answer.is_empty()),
        }
    };
    out.push(event);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::json::{assert_each_malformed, last_usage, parse_all, terminal, texts};

    fn parse(stream: &str) -> Vec<AgentEvent> {
        let (events, issues) = parse_all(&mut QwenDialect::default(), stream);
        assert_eq!(issues, []);
        events
    }

    #[test]
    fn usage_counts_cached_input_once() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/qwen/plain.jsonl"
        ));
        let expected = Usage {
            input_tokens: 100,
            cached_input_tokens: 20,
            output_tokens: 7,
            reasoning_tokens: None,
            cost_usd: None,
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
    fn a_cut_stream_gives_retry_notices_and_a_failure_not_an_api_error_answer() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/qwen/stream_cut.jsonl"
        ));
        let retries = events
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
            .count();
        assert!(retries >= 4, "{events:#?}");
        assert!(
            texts(&events)
                .iter()
                .all(|text| !text.contains("[API Error")),
            "{events:#?}"
        );
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnFailed { message, .. }] if message.contains("without a finish reason")
        ));
    }

    #[test]
    fn an_http_error_is_a_failure_with_its_message() {
        let events = parse(include_str!(
            "../../../../tests/fixtures/captures/qwen/error_401.jsonl"
        ));
        assert!(matches!(
            terminal(&events)[..],
            [AgentEvent::TurnFailed { message, http_status: None }]
                if message == "[API Error: 401 scripted failure 401]"
        ));
    }

    #[test]
    fn wrongly_shaped_lines_are_malformed() {
        assert_each_malformed::<QwenDialect>(&[
            (
                r#"{"type":"system","subtype":"init","session_id":7}"#,
                "system",
            ),
            (r#"{"type":"result","is_error":"yes"}"#, "result"),
            (
                r#"{"type":"result","usage":{"input_tokens":"many"}}"#,
                "result",
            ),
        ]);
    }
}
