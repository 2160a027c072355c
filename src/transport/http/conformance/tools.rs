//! The tools of the `tools-call-*` scenarios, with the fixed names and answers the suite
//! checks: content kinds, tool errors, progress, logging, elicitation and sampling (requests to
//! a 2025-11-25 client; a 2026-07-28 one is asked through the result instead, see `asking`).

use std::time::Duration;

use rmcp::RoleServer;
#[allow(deprecated)]
// MCP logging (see crate::mcp::logging) and sampling: SEP-2577 deprecates both
use rmcp::model::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, JsonObject, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ResourceContents, SamplingMessage,
    Tool,
};
use rmcp::service::RequestContext;

use super::elicitation::{self, Form};
use super::input_schema;
use crate::mcp::logging as client_logs;

/// A 1x1 PNG and an empty WAV: the smallest valid payloads of their kinds.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";
/// The suite checks that progress arrives in steps, not that they take long.
const PROGRESS_STEP: Duration = Duration::from_millis(50);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixture {
    SimpleText,
    Image,
    Audio,
    EmbeddedResource,
    MixedContent,
    Error,
    Progress,
    Logging,
    RequestLogging,
    Elicitation(Form),
    Sampling,
}

impl Fixture {
    const ALL: [Self; 13] = [
        Self::SimpleText,
        Self::Image,
        Self::Audio,
        Self::EmbeddedResource,
        Self::MixedContent,
        Self::Error,
        Self::Progress,
        Self::Logging,
        Self::RequestLogging,
        Self::Elicitation(Form::User),
        Self::Elicitation(Form::Defaults),
        Self::Elicitation(Form::Enums),
        Self::Sampling,
    ];

    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|fixture| fixture.name() == name)
    }

    fn name(self) -> &'static str {
        match self {
            Self::SimpleText => "test_simple_text",
            Self::Image => "test_image_content",
            Self::Audio => "test_audio_content",
            Self::EmbeddedResource => "test_embedded_resource",
            Self::MixedContent => "test_multiple_content_types",
            Self::Error => "test_error_handling",
            Self::Progress => "test_tool_with_progress",
            Self::Logging => "test_tool_with_logging",
            Self::RequestLogging => "test_logging_tool",
            Self::Elicitation(Form::User) => "test_elicitation",
            Self::Elicitation(Form::Defaults) => "test_elicitation_sep1034_defaults",
            Self::Elicitation(Form::Enums) => "test_elicitation_sep1330_enums",
            Self::Sampling => "test_sampling",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Self::SimpleText => "Conformance fixture: returns simple text content",
            Self::Image => "Conformance fixture: returns image content",
            Self::Audio => "Conformance fixture: returns audio content",
            Self::EmbeddedResource => "Conformance fixture: returns an embedded resource",
            Self::MixedContent => "Conformance fixture: returns text, image and resource content",
            Self::Error => "Conformance fixture: always returns a tool error",
            Self::Progress => "Conformance fixture: reports progress 0, 50 and 100 of 100",
            Self::Logging | Self::RequestLogging => {
                "Conformance fixture: logs three info messages, if the client's level allows"
            }
            Self::Elicitation(_) => "Conformance fixture: asks the client with a form",
            Self::Sampling => "Conformance fixture: asks the client's model `prompt`",
        }
    }

    fn properties(self) -> serde_json::Value {
        match self {
            Self::Sampling => serde_json::json!({"prompt": {"type": "string"}}),
            _ => serde_json::json!({}),
        }
    }

    /// Every fixture, as listed by `tools/list`.
    pub fn tools() -> impl Iterator<Item = Tool> {
        Self::ALL.into_iter().map(|fixture| {
            Tool::new(
                fixture.name(),
                fixture.description(),
                input_schema(fixture.properties()),
            )
        })
    }

    pub async fn call(
        self,
        arguments: Option<&JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        match self {
            Self::SimpleText => CallToolResult::success(vec![ContentBlock::text(
                "This is a simple text response for testing.",
            )]),
            Self::Image => CallToolResult::success(vec![ContentBlock::image(PNG, "image/png")]),
            Self::Audio => CallToolResult::success(vec![ContentBlock::audio(WAV, "audio/wav")]),
            Self::EmbeddedResource => {
                CallToolResult::success(vec![ContentBlock::resource(ResourceContents::text(
                    "This is an embedded resource content.",
                    "test://embedded-resource",
                ))])
            }
            Self::MixedContent => CallToolResult::success(vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(PNG, "image/png"),
                ContentBlock::resource(
                    ResourceContents::text(
                        r#"{"test":"data","value":123}"#,
                        "test://mixed-content-resource",
                    )
                    .with_mime_type("application/json"),
                ),
            ]),
            Self::Error => CallToolResult::error(vec![ContentBlock::text(
                "This tool intentionally returns an error for testing",
            )]),
            Self::Progress => progress(context).await,
            Self::Logging | Self::RequestLogging => logging(context).await,
            Self::Elicitation(form) => elicitation::ask(form, arguments, context).await,
            Self::Sampling => sample(arguments, context).await,
        }
    }
}

async fn progress(context: &RequestContext<RoleServer>) -> CallToolResult {
    let token = context.meta.get_progress_token();
    for (step, message) in [(0.0, "Starting"), (50.0, "Halfway"), (100.0, "Complete")] {
        if let Some(token) = &token {
            let param = ProgressNotificationParam::new(token.clone(), step)
                .with_total(100.0)
                .with_message(message);
            if let Err(error) = context.peer.notify_progress(param).await {
                tracing::debug!(%error, "a conformance progress notification was not sent");
            }
        }
        tokio::time::sleep(PROGRESS_STEP).await;
    }
    CallToolResult::success(vec![ContentBlock::text("Progress test completed")])
}

/// Three info messages a step apart, sent only at the level the session set or the request
/// named (a 2026-07-28 request that named none hears nothing).
#[allow(deprecated)] // MCP logging: see crate::mcp::logging
async fn logging(context: &RequestContext<RoleServer>) -> CallToolResult {
    let level = LoggingLevel::Info;
    let heard = client_logs::level_for(context).is_some_and(|at| client_logs::passes(level, at));
    for message in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        if heard {
            let param = LoggingMessageNotificationParam::new(level, message.into());
            if let Err(error) = context.peer.notify_logging_message(param).await {
                tracing::debug!(%error, "a conformance log message was not sent");
            }
        }
        tokio::time::sleep(PROGRESS_STEP).await;
    }
    CallToolResult::success(vec![ContentBlock::text("Logging test completed")])
}

/// Ask the client's model the call's `prompt` (`sampling/createMessage`) and answer with its
/// reply, or an error result saying why not.
#[allow(deprecated)] // sampling: SEP-2577 deprecates it, the 2025-11-25 scenario asks for it
async fn sample(
    arguments: Option<&JsonObject>,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    let prompt = arguments
        .and_then(|arguments| arguments.get("prompt"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("Say hello");
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100);
    match context.peer.create_message(params).await {
        Ok(answer) => {
            let texts: Vec<String> = (answer.message.content.into_vec().iter())
                .filter_map(|block| block.as_text().map(|text| text.text.clone()))
                .collect();
            CallToolResult::success(vec![ContentBlock::text(format!(
                "LLM response: {}",
                texts.join("\n")
            ))])
        }
        Err(error) => CallToolResult::error(vec![ContentBlock::text(format!(
            "the client's model could not be asked: {error}"
        ))]),
    }
}
