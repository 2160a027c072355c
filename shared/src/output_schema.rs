//! A JSON Schema the caller wants the final answer to follow: checked before any CLI starts,
//! handed to the CLIs that take one natively (see [`crate::cli::Cli::schema_flag`]), spelled
//! out in the prompt for the others, and the answer validated against it for every CLI.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

/// How many of the validator's errors a failure names.
const ERRORS_NAMED: usize = 3;

/// A checked JSON Schema for the final answer.
#[derive(Clone)]
pub struct OutputSchema {
    schema: Value,
    validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("OutputSchema").field(&self.schema).finish()
    }
}

/// Why a schema cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// It is not a JSON object (the JSON type it is).
    #[error(
        "output_schema must be a JSON Schema object (e.g. {{\"type\": \"object\", \
         \"properties\": {{…}}}}), not {0}"
    )]
    NotAnObject(&'static str),
    /// It is not a valid JSON Schema.
    #[error(
        "output_schema is not a valid JSON Schema: {0}. Fix the schema (drafts 4 to 2020-12 \
         are understood; remote `$ref`s are not fetched)"
    )]
    Invalid(String),
}

/// Why an answer does not follow the schema. The message names the fix.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// The answer is not JSON.
    #[error("the answer is not JSON ({0}): the schema asks for one JSON value and no prose")]
    NotJson(String),
    /// The answer is JSON that breaks the schema: the validator's first errors.
    #[error("the answer does not conform to output_schema: {}", .0.join("; "))]
    NotConforming(Vec<String>),
}

impl OutputSchema {
    /// `schema`, checked: a JSON object that is a valid JSON Schema.
    pub fn new(schema: Value) -> Result<Self, SchemaError> {
        if !schema.is_object() {
            return Err(SchemaError::NotAnObject(json_type(&schema)));
        }
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| SchemaError::Invalid(e.to_string()))?;
        Ok(Self {
            schema,
            validator: Arc::new(validator),
        })
    }

    /// The schema as given.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The instruction appended to the prompt of a CLI that takes no schema natively.
    pub fn prompt_instruction(&self) -> String {
        format!(
            "\n\nAnswer with exactly one JSON value that conforms to this JSON Schema, and \
             nothing else: no prose, no explanation.\n{}",
            self.schema
        )
    }

    /// The answer parsed and checked: a ```json fence around it is stripped. A failure names
    /// the first errors, each at its JSON pointer in the answer.
    pub fn validate(&self, answer: &str) -> Result<Value, AnswerError> {
        let value: Value = serde_json::from_str(strip_fence(answer))
            .map_err(|error| AnswerError::NotJson(error.to_string()))?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(ERRORS_NAMED)
            .map(|error| {
                format!(
                    "at `{}`: {error}",
                    pointer(&error.instance_path().to_string())
                )
            })
            .collect();
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(AnswerError::NotConforming(errors))
        }
    }
}

/// The schema written to a file of its own, for a CLI that reads it from one; its directory
/// goes when this is dropped.
#[derive(Debug)]
pub(crate) struct SchemaFile {
    path: PathBuf,
}

impl SchemaFile {
    pub(crate) fn write(schema: &OutputSchema, path: PathBuf) -> std::io::Result<Self> {
        let file = Self { path };
        std::fs::write(&file.path, schema.schema.to_string())?;
        Ok(file)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SchemaFile {
    fn drop(&mut self) {
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The root's pointer is empty: it is named `/` so it reads as a place.
fn pointer(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// The text inside a Markdown code fence (```json or bare ```) that wraps the whole answer.
fn strip_fence(answer: &str) -> &str {
    let trimmed = answer.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return trimmed;
    };
    // The info string (`json`) runs to the end of the fence's first line.
    match body.split_once('\n') {
        Some((info, inner)) if !info.trim().contains(char::is_whitespace) => inner.trim(),
        _ => trimmed,
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn person() -> OutputSchema {
        OutputSchema::new(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "integer"}}
            },
            "required": ["name"]
        }))
        .unwrap()
    }

    #[test]
    fn a_conforming_answer_parses_with_or_without_a_json_fence() {
        let schema = person();
        let expected = json!({"name": "x", "tags": [1]});
        for answer in [
            r#"{"name": "x", "tags": [1]}"#,
            "```json\n{\"name\": \"x\", \"tags\": [1]}\n```",
            "  ```\n{\"name\": \"x\", \"tags\": [1]}\n```\n",
        ] {
            assert_eq!(schema.validate(answer), Ok(expected.clone()), "{answer}");
        }
    }

    #[test]
    fn a_non_conforming_answer_names_each_error_at_its_pointer() {
        let error = person()
            .validate(r#"{"tags": [1, "two"]}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("at `/tags/1`"), "{error}");
        assert!(
            error.contains("at `/`: \"name\" is a required property"),
            "{error}"
        );
    }

    #[test]
    fn prose_is_not_json() {
        let error = person().validate("Here it is: {}").unwrap_err();
        assert!(matches!(error, AnswerError::NotJson(_)), "{error}");
        // A fence that does not wrap the whole answer is not stripped.
        let error = person().validate("```json\n{}\n``` and more").unwrap_err();
        assert!(matches!(error, AnswerError::NotJson(_)), "{error}");
    }

    #[test]
    fn an_invalid_schema_is_refused_naming_the_fix() {
        let error = OutputSchema::new(json!({"type": "no-such-type"})).unwrap_err();
        assert!(matches!(error, SchemaError::Invalid(_)), "{error}");
        assert!(error.to_string().contains("Fix the schema"), "{error}");
        let error = OutputSchema::new(json!("object")).unwrap_err();
        assert!(error.to_string().contains("not a string"), "{error}");
    }

    #[test]
    fn the_prompt_instruction_carries_the_schema() {
        let instruction = person().prompt_instruction();
        assert!(instruction.contains("exactly one JSON value"));
        assert!(
            instruction.contains(r#""required":["name"]"#),
            "{instruction}"
        );
    }
}
