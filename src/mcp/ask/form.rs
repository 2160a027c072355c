//! The one form every question is: the question's text and one checkbox, `allow`. The same
//! form goes out as an `elicitation/create` request (2025-11-25) and as an input request of an
//! `InputRequiredResult` (2026-07-28); the person's answer is read the same way from both.

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::NoLeave;

/// The form the person fills: one checkbox.
#[derive(Debug, Deserialize, JsonSchema)]
struct Permit {
    /// Allow what the question above describes (leave it unticked, or decline, to refuse).
    allow: bool,
}

rmcp::elicit_safe!(Permit);

/// `question` as a form with the one `allow` checkbox.
pub fn form(question: String) -> Result<ElicitRequestParams, NoLeave> {
    let requested_schema = ElicitationSchema::from_type::<Permit>()
        .map_err(|error| NoLeave::Failed(format!("the question's form is invalid: {error}")))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question,
        requested_schema,
    })
}

/// The person's answer: `Ok` only for an accept with `allow` ticked.
pub fn read(answer: ElicitResult) -> Result<(), NoLeave> {
    match answer.action {
        ElicitationAction::Accept => {
            let permit = answer
                .content
                .and_then(|content| serde_json::from_value::<Permit>(content).ok());
            match permit {
                Some(Permit { allow: true }) => Ok(()),
                _ => Err(NoLeave::NotTicked),
            }
        }
        ElicitationAction::Decline => Err(NoLeave::Declined),
        // A cancel, or an action of a later revision: no leave either way.
        _ => Err(NoLeave::Cancelled),
    }
}

/// An input response as it came back in a retry: an elicitation's result, or not one.
pub fn read_response(response: Value) -> Result<(), NoLeave> {
    let answer = serde_json::from_value::<ElicitResult>(response).map_err(|error| {
        NoLeave::Failed(format!("the answer is not an elicitation result: {error}"))
    })?;
    read(answer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_an_accept_with_allow_ticked_allows() {
        let answer = |value: Value| read_response(value).map_err(|no| no.answer());
        assert!(answer(json!({"action": "accept", "content": {"allow": true}})).is_ok());
        for refused in [
            json!({"action": "accept", "content": {"allow": false}}),
            json!({"action": "accept", "content": {"allow": "yes"}}),
            json!({"action": "accept"}),
            json!({"action": "decline"}),
            json!({"action": "cancel"}),
            json!({"nothing": "here"}),
            json!("accept"),
        ] {
            assert!(answer(refused.clone()).is_err(), "{refused}");
        }
    }

    #[test]
    fn the_form_is_the_question_with_one_required_allow_checkbox() {
        let Ok(ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        }) = form("May it?".to_owned())
        else {
            panic!("a form");
        };
        assert_eq!(message, "May it?");
        let schema = serde_json::to_value(requested_schema).expect("a schema");
        assert_eq!(schema["properties"]["allow"]["type"], "boolean", "{schema}");
        assert_eq!(schema["required"], json!(["allow"]), "{schema}");
    }
}
