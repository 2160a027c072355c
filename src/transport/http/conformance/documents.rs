//! The resources and prompts with the fixed names and contents the suite reads (`resources-*`
//! and `prompts-*` scenarios), offered beside the server's own job resources and prompts.

use rmcp::model::{
    ContentBlock, GetPromptResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, Role,
};
use serde_json::{Map, Value};

use super::tools::PNG;

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
/// The one URI the subscribe scenarios subscribe to.
pub const WATCHED: &str = "test://watched-resource";
const TEMPLATE_PREFIX: &str = "test://template/";
const TEMPLATE_SUFFIX: &str = "/data";

pub fn resources() -> Vec<Resource> {
    vec![
        Resource::new(STATIC_TEXT, "static-text")
            .with_description("Conformance fixture: a static text resource")
            .with_mime_type("text/plain"),
        Resource::new(STATIC_BINARY, "static-binary")
            .with_description("Conformance fixture: a static binary resource (a PNG)")
            .with_mime_type("image/png"),
        Resource::new(WATCHED, "watched-resource")
            .with_description("Conformance fixture: a resource to subscribe to")
            .with_mime_type("text/plain"),
    ]
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(
            format!("{TEMPLATE_PREFIX}{{id}}{TEMPLATE_SUFFIX}"),
            "template-data",
        )
        .with_description("Conformance fixture: data for an id")
        .with_mime_type("application/json"),
    ]
}

/// The fixture resource at `uri`, if it is one.
pub fn read(uri: &str) -> Option<ReadResourceResult> {
    let contents = match uri {
        STATIC_TEXT => {
            ResourceContents::text("This is the content of the static text resource.", uri)
        }
        STATIC_BINARY => ResourceContents::blob(PNG, uri).with_mime_type("image/png"),
        WATCHED => ResourceContents::text("The watched resource.", uri),
        _ => {
            let id = uri
                .strip_prefix(TEMPLATE_PREFIX)?
                .strip_suffix(TEMPLATE_SUFFIX)?;
            let data = serde_json::json!({
                "id": id,
                "templateTest": true,
                "data": format!("Data for ID: {id}"),
            });
            ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
        }
    };
    Some(ReadResourceResult::new(vec![contents]))
}

pub fn prompts() -> Vec<Prompt> {
    let required = |name: &str, description: &str| {
        PromptArgument::new(name)
            .with_description(description)
            .with_required(true)
    };
    vec![
        Prompt::new(
            "test_simple_prompt",
            Some("Conformance fixture: a prompt without arguments"),
            None,
        ),
        Prompt::new(
            "test_prompt_with_arguments",
            Some("Conformance fixture: a prompt with two arguments"),
            Some(vec![
                required("arg1", "First test argument"),
                required("arg2", "Second test argument"),
            ]),
        ),
        Prompt::new(
            "test_prompt_with_embedded_resource",
            Some("Conformance fixture: a prompt embedding a resource"),
            Some(vec![required(
                "resourceUri",
                "URI of the resource to embed",
            )]),
        ),
        Prompt::new(
            "test_prompt_with_image",
            Some("Conformance fixture: a prompt with an image"),
            None,
        ),
    ]
}

/// The fixture prompt `name`, if it is one.
pub fn get_prompt(name: &str, arguments: Option<&Map<String, Value>>) -> Option<GetPromptResult> {
    let argument = |key: &str| {
        arguments
            .and_then(|arguments| arguments.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let user = |content: ContentBlock| PromptMessage::new(Role::User, content);
    let messages = match name {
        "test_simple_prompt" => vec![user(ContentBlock::text(
            "This is a simple prompt for testing.",
        ))],
        "test_prompt_with_arguments" => vec![user(ContentBlock::text(format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            argument("arg1"),
            argument("arg2")
        )))],
        "test_prompt_with_embedded_resource" => vec![
            user(ContentBlock::resource(ResourceContents::text(
                "Embedded resource content for testing.",
                argument("resourceUri"),
            ))),
            user(ContentBlock::text(
                "Please process the embedded resource above.",
            )),
        ],
        "test_prompt_with_image" => vec![
            user(ContentBlock::image(PNG, "image/png")),
            user(ContentBlock::text("Please analyze the image above.")),
        ],
        _ => return None,
    };
    Some(GetPromptResult::new(messages))
}
