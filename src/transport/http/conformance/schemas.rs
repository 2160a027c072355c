//! Two tools whose point is their input schema, for scenarios the suite runs but does not yet
//! score: `json_schema_2020_12_tool` (`json-schema-2020-12`: 2020-12 keywords survive
//! `tools/list`) and `test_custom_header`, whose `region` a client also sends as the
//! `Mcp-Param-Region` header (`http-custom-header-server-validation`, SEP-2243 `x-mcp-header`):
//! rmcp checks the header against the body, given the tool's schema (`get_tool`).

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};

use super::input_schema;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaFixture {
    JsonSchema2020,
    CustomHeader,
}

impl SchemaFixture {
    const ALL: [Self; 2] = [Self::JsonSchema2020, Self::CustomHeader];

    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|fixture| fixture.name() == name)
    }

    fn name(self) -> &'static str {
        match self {
            Self::JsonSchema2020 => "json_schema_2020_12_tool",
            Self::CustomHeader => "test_custom_header",
        }
    }

    fn tool(self) -> Tool {
        match self {
            Self::JsonSchema2020 => Tool::new(
                self.name(),
                "Conformance fixture: an input schema of JSON Schema 2020-12's vocabulary",
                json_schema_2020_12(),
            ),
            Self::CustomHeader => {
                let mut schema = input_schema(json!({
                    "region": {"type": "string", "x-mcp-header": "Region"},
                }));
                schema.insert("required".into(), json!(["region"]));
                Tool::new(
                    self.name(),
                    "Conformance fixture: its `region` rides in the Mcp-Param-Region header too",
                    schema,
                )
            }
        }
    }

    /// Every fixture, as listed by `tools/list`.
    pub fn tools() -> impl Iterator<Item = Tool> {
        Self::ALL.into_iter().map(Self::tool)
    }

    /// What the call brought: neither fixture does anything with it.
    pub fn call(self, arguments: Option<&JsonObject>) -> CallToolResult {
        let arguments = arguments.cloned().map_or(Value::Null, Value::Object);
        CallToolResult::success(vec![ContentBlock::text(format!(
            "{} received {arguments}",
            self.name()
        ))])
    }
}

/// The schema the scenario checks keyword by keyword: `$schema`, `$defs` with an `$anchor`,
/// `$ref`, `allOf`/`anyOf`, `if`/`then`/`else` and `additionalProperties`.
fn json_schema_2020_12() -> JsonObject {
    let mut schema = input_schema(json!({
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    }));
    let keywords = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            },
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    });
    if let Value::Object(keywords) = keywords {
        schema.extend(keywords);
    }
    schema
}
