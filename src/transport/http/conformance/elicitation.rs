//! The conformance suite's elicitation fixtures (`tools-call-elicitation`, SEP-1034 defaults,
//! SEP-1330 enums): each asks the client with the form the suite checks and tells what came
//! back.

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, ElicitRequestParams, JsonObject};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

/// Which form to ask with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A username and an email, with the caller's `message`.
    User,
    /// One field of each primitive type, each with a default (SEP-1034).
    Defaults,
    /// The five kinds of enum field (SEP-1330).
    Enums,
}

/// Ask the client with `form` and answer with what it said, or an error result saying why not.
pub async fn ask(
    form: Form,
    arguments: Option<&JsonObject>,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    let message = arguments
        .and_then(|arguments| arguments.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("Please answer the conformance suite's form");
    let request = json!({"mode": "form", "message": message, "requestedSchema": schema(form)});
    let params: ElicitRequestParams = match serde_json::from_value(request) {
        Ok(params) => params,
        Err(error) => return failed(format!("the fixture's form is not valid: {error}")),
    };
    match context.peer.create_elicitation(params).await {
        Ok(answer) => {
            let content = answer.content.unwrap_or(Value::Null);
            let action = serde_json::to_value(answer.action).unwrap_or(Value::Null);
            CallToolResult::success(vec![ContentBlock::text(format!(
                "Elicitation completed: action={}, content={content}",
                action.as_str().unwrap_or("unknown")
            ))])
        }
        Err(error) => failed(format!("the client could not be asked: {error}")),
    }
}

fn failed(why: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(why)])
}

fn schema(form: Form) -> Value {
    match form {
        Form::User => json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }),
        Form::Defaults => json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"],
                           "default": "active"},
                "verified": {"type": "boolean", "default": true},
            },
        }),
        Form::Enums => json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                               "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array",
                                  "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]}},
            },
        }),
    }
}
