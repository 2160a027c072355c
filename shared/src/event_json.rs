//! An event as a line of JSON, written directly: the same bytes as `serde_json::to_writer` of
//! the event, in half its time (37 against 70-85 ns an event on the server bench's stream:
//! `cargo bench -p cli-agent-engine --bench engine -- long`). The type and the field names are
//! written as they are, and a string without bytes to escape, nearly every one, is copied
//! whole. For a recorder that writes every event of a run.

use crate::json_string::first_special;
use crate::event::{AgentEvent, NoticeLevel};

impl AgentEvent {
    /// Append the event's JSON to `out`, exactly as `serde_json::to_writer` writes it.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = Object::open(out, self.type_name());
        match self {
            Self::SessionStarted { session_id, model } => {
                object.string("session_id", session_id);
                object.optional_string("model", model.as_deref());
            }
            Self::Text { text, delta } => {
                object.string("text", text);
                object.raw("delta", if *delta { "true" } else { "false" });
            }
            Self::Reasoning { text } => object.string("text", text),
            Self::ToolStarted { id, name, command } => {
                object.optional_string("id", id.as_deref());
                object.string("name", name);
                object.optional_string("command", command.as_deref());
            }
            Self::ToolFinished {
                id,
                name,
                command,
                exit_code,
                success,
            } => {
                object.optional_string("id", id.as_deref());
                object.string("name", name);
                object.optional_string("command", command.as_deref());
                object.optional_number("exit_code", *exit_code);
                object.raw("success", if *success { "true" } else { "false" });
            }
            // Rare (and a float's cost): serde_json writes them, after our tag.
            Self::Usage(usage) => object.fields_of(usage),
            Self::Question(question) => object.fields_of(question),
            Self::Notice { level, message } => {
                object.string("level", level.name());
                object.string("message", message);
            }
            Self::TurnCompleted { answer } => object.optional_string("answer", answer.as_deref()),
            Self::TurnFailed {
                message,
                http_status,
            } => {
                object.string("message", message);
                object.optional_number("http_status", *http_status);
            }
            Self::TurnAborted { message } => object.string("message", message),
        }
        object.out.push(b'}');
    }

    /// The `type` serde gives the variant.
    fn type_name(&self) -> &'static str {
        match self {
            Self::SessionStarted { .. } => "session_started",
            Self::Text { .. } => "text",
            Self::Reasoning { .. } => "reasoning",
            Self::ToolStarted { .. } => "tool_started",
            Self::ToolFinished { .. } => "tool_finished",
            Self::Usage(_) => "usage",
            Self::Notice { .. } => "notice",
            Self::TurnCompleted { .. } => "turn_completed",
            Self::TurnFailed { .. } => "turn_failed",
            Self::TurnAborted { .. } => "turn_aborted",
            Self::Question(_) => "question",
        }
    }
}

impl NoticeLevel {
    fn name(self) -> &'static str {
        match self {
            Self::Retry => "retry",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// A JSON object being written, its `type` first.
struct Object<'o> {
    out: &'o mut Vec<u8>,
}

impl<'o> Object<'o> {
    /// `kind` and the names of fields are ours, plain words: written as they are.
    fn open(out: &'o mut Vec<u8>, kind: &str) -> Self {
        for part in ["{\"type\":\"", kind, "\""] {
            out.extend_from_slice(part.as_bytes());
        }
        Self { out }
    }

    fn key(&mut self, name: &str) {
        for part in [",\"", name, "\":"] {
            self.out.extend_from_slice(part.as_bytes());
        }
    }

    fn raw(&mut self, name: &str, value: &str) {
        self.key(name);
        self.out.extend_from_slice(value.as_bytes());
    }

    fn string(&mut self, name: &str, value: &str) {
        self.key(name);
        write_string(self.out, value);
    }

    fn optional_string(&mut self, name: &str, value: Option<&str>) {
        match value {
            Some(value) => self.string(name, value),
            None => self.raw(name, "null"),
        }
    }

    fn optional_number(&mut self, name: &str, value: Option<impl std::fmt::Display>) {
        self.key(name);
        match value {
            Some(number) => {
                use std::io::Write;
                // Writing to a Vec cannot fail.
                let _ = write!(self.out, "{number}");
            }
            None => self.out.extend_from_slice(b"null"),
        }
    }

    /// The fields of `value` (a struct) as serde_json writes them, after the ones so far.
    fn fields_of(&mut self, value: &impl serde::Serialize) {
        let mut fields = Vec::new();
        if serde_json::to_writer(&mut fields, value).is_err() {
            return;
        }
        // `{...}` of at least one field: keep its inside, after a comma.
        if let Some(inside) = fields.strip_prefix(b"{").and_then(|f| f.strip_suffix(b"}"))
            && !inside.is_empty()
        {
            self.out.push(b',');
            self.out.extend_from_slice(inside);
        }
    }
}

/// `text` as a JSON string, escaped as serde_json escapes it: quote, backslash and control
/// characters only, with the short escapes where JSON has them.
fn write_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut plain = 0;
    while let Some(at) = first_special(bytes, plain) {
        out.extend_from_slice(&bytes[plain..at]);
        write_escape(out, bytes[at]);
        plain = at + 1;
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

/// The escape of a special byte (see [`first_special`]): the short one where JSON has it.
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    let short: &[u8] = match byte {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        b'\n' => b"\\n",
        b'\r' => b"\\r",
        b'\t' => b"\\t",
        0x08 => b"\\b",
        0x0c => b"\\f",
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
            return;
        }
    };
    out.extend_from_slice(short);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Usage;
    use crate::question::{PersonAnswer, PersonQuestion, QuestionAbout};

    /// Strings with every byte serde_json escapes, and some it does not.
    fn strings() -> Vec<String> {
        let mut strings: Vec<String> = (0u8..0x20)
            .map(|byte| format!("a{}b", byte as char))
            .collect();
        strings.extend(
            [
                "",
                "plain",
                "\"quoted\"",
                "back\\slash",
                "é ü 日本 🎉",
                "\u{7f}\u{80}",
                "/",
            ]
            .map(str::to_owned),
        );
        strings
    }

    fn events() -> Vec<AgentEvent> {
        let mut events = Vec::new();
        for text in strings() {
            let some = Some(text.clone());
            events.extend([
                AgentEvent::SessionStarted {
                    session_id: text.clone(),
                    model: some.clone(),
                },
                AgentEvent::SessionStarted {
                    session_id: text.clone(),
                    model: None,
                },
                AgentEvent::Text {
                    text: text.clone(),
                    delta: true,
                },
                AgentEvent::Reasoning { text: text.clone() },
                AgentEvent::ToolStarted {
                    id: some.clone(),
                    name: text.clone(),
                    command: None,
                },
                AgentEvent::ToolFinished {
                    id: None,
                    name: text.clone(),
                    command: some.clone(),
                    exit_code: Some(-3),
                    success: false,
                },
                AgentEvent::ToolFinished {
                    id: some.clone(),
                    name: text.clone(),
                    command: None,
                    exit_code: None,
                    success: true,
                },
                AgentEvent::TurnCompleted {
                    answer: some.clone(),
                },
                AgentEvent::TurnCompleted { answer: None },
                AgentEvent::TurnFailed {
                    message: text.clone(),
                    http_status: Some(429),
                },
                AgentEvent::Question(PersonQuestion {
                    about: QuestionAbout::ToolPermission {
                        tool: text.clone(),
                        input: text.clone(),
                    },
                    answer: PersonAnswer::Allowed,
                    answered_by: some.clone(),
                    why: None,
                }),
                AgentEvent::Question(PersonQuestion {
                    about: QuestionAbout::ServerBounds {
                        bounds: text.clone(),
                    },
                    answer: PersonAnswer::NobodyToAsk,
                    answered_by: None,
                    why: some.clone(),
                }),
                AgentEvent::TurnAborted { message: text },
            ]);
        }
        for level in [NoticeLevel::Retry, NoticeLevel::Warning, NoticeLevel::Error] {
            events.push(AgentEvent::Notice {
                level,
                message: "m".to_owned(),
            });
        }
        events.push(AgentEvent::Usage(Usage::default()));
        events.push(AgentEvent::Usage(Usage {
            input_tokens: 1,
            cached_input_tokens: 2,
            output_tokens: 3,
            reasoning_tokens: Some(4),
            cost_usd: Some(0.1 + 0.2),
        }));
        events
    }

    #[test]
    fn every_event_is_written_byte_for_byte_as_serde_json_writes_it() {
        let mut out = Vec::new();
        for event in events() {
            out.clear();
            event.write_json(&mut out);
            let serde = serde_json::to_vec(&event).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&serde),
                "{event:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_written_as_serde_json_writes_it(text in proptest::prelude::any::<String>()) {
            let event = AgentEvent::ToolStarted { id: Some(text.clone()), name: text, command: None };
            let mut out = Vec::new();
            event.write_json(&mut out);
            proptest::prop_assert_eq!(out, serde_json::to_vec(&event).unwrap());
        }
    }
}
