//! The agent tools, one per CLI or custom agent: what the calling model needs to choose and
//! call one, and how a call's arguments become a run request within the policy's bounds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cli_agent_engine::Base;
use cli_agent_engine::Isolation;
use cli_agent_engine::clis::BUILTINS;
use cli_agent_engine::output_schema::{OutputSchema, SchemaError};
use cli_agent_engine::{Agent, Effort, Permission, RunRequest};
use rmcp::handler::server::common::schema_for_output;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Offer, arguments_schema, drop_numeric_formats};
use crate::mcp::policy::{Policy, Refusal};
use crate::mcp::result::{JobReport, error_result};

/// The arguments of every tool. Fields only some CLIs support are named by their
/// [`extra_arguments`](cli_agent_engine::clis::Cli::extra_arguments). Their descriptions (the
/// doc comments) are terse, since every agent tool repeats them: what the arguments mean is
/// said once, in the server's instructions (`mcp/instructions.rs`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolArgs {
    pub prompt: String,
    pub workspace: Option<PathBuf>,
    #[serde(default)]
    #[schemars(schema_with = "permission_schema")]
    pub permission: Permission,
    pub model: Option<String>,
    /// An earlier result's, to continue it; else a fresh conversation.
    pub session_id: Option<String>,
    /// Branch session_id; the original stays.
    #[serde(default)]
    pub fork: bool,
    #[serde(default)]
    #[schemars(schema_with = "effort_schema")]
    pub effort: Option<Effort>,
    #[schemars(range(min = 1))]
    pub timeout_secs: Option<u64>,
    /// Added to the system prompt.
    pub append_system_prompt: Option<String>,
    /// Answer at once with a job_id.
    #[serde(default)]
    pub background: bool,
    /// Answer with a job_id if running after this (0: never).
    pub handoff_after_secs: Option<u64>,
    /// A workspace file to append the answer to.
    pub save_to: Option<PathBuf>,
    #[serde(default)]
    #[schemars(schema_with = "isolation_schema")]
    pub isolation: Option<Isolation>,
    #[serde(default)]
    #[schemars(schema_with = "base_schema")]
    pub base: Option<BaseArg>,
    /// Shell command run after the agent; needs workspace-write.
    pub check: Option<String>,
    /// JSON Schema the answer must match; parsed into `output`.
    pub output_schema: Option<JsonObject>,
}

/// The `base` argument's values.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BaseArg {
    Working,
    Head,
}

fn isolation_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["none", "worktree"],
        "description": "worktree: a git worktree of its own"
    })
}

fn effort_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["low", "medium", "high", "max"],
        "description": "Reasoning effort."
    })
}

fn base_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["working", "head"],
        "default": "working"
    })
}

/// A call's run request and what it asks of the job around it.
#[derive(Debug)]
pub struct CallRequest {
    /// The agent the call runs.
    pub agent: Agent,
    pub run: RunRequest,
    pub background: bool,
    /// `Some(0)` never hands off; `None` takes the server's default.
    pub handoff_after_secs: Option<u64>,
    pub save_to: Option<PathBuf>,
    /// The bounds this call goes past that the person may lift (see
    /// [`Refusal::person_may_allow`]): it runs only if they allow it, else the first is its error.
    pub beyond_bounds: Vec<Refusal>,
}

/// Arguments only some CLIs support.
fn extras() -> impl Iterator<Item = &'static str> {
    let mut all: Vec<_> = BUILTINS
        .iter()
        .flat_map(|cli| cli.extra_arguments().iter().copied())
        .collect();
    all.sort_unstable();
    all.dedup();
    all.into_iter()
}

/// Whether `agent`'s tool takes `field`.
fn takes(agent: Agent, field: &str) -> bool {
    !extras().any(|extra| extra == field) || agent.cli().extra_arguments().contains(&field)
}

/// An enum of plain strings: some clients cannot read the `oneOf` schemars would write.
fn permission_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["read-only", "workspace-write", "unlimited"],
        "default": "read-only"
    })
}

#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    #[error(
        "invalid arguments for the {agent} tool: {source}. Pass an object such as \
         {{\"prompt\": \"…\"}}; its inputSchema lists the rest"
    )]
    Invalid {
        agent: Agent,
        source: serde_json::Error,
    },
    #[error("`{field}` is not an argument of the {agent} tool; only {only} takes it")]
    NotForThisAgent {
        agent: Agent,
        field: &'static str,
        only: String,
    },
    #[error("timeout_secs must be at least 1: leave it out for the server's default")]
    ZeroTimeout,
    #[error("no workspace given, and the server's working directory is unknown: pass `workspace`")]
    NoWorkspace,
    #[error(
        "`check` runs a shell command that may write (builds, tests), so it needs permission \
         workspace-write or above: raise `permission`, or leave `check` out"
    )]
    CheckNeedsWrite,
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    OutputSchema(#[from] SchemaError),
}

/// Read a call's arguments into a run request within `policy`'s bounds: every bound refuses.
/// Blank optional strings count as absent: calling models often fill every field.
pub fn call_request(
    agent: Agent,
    arguments: Option<JsonObject>,
    policy: &Policy,
) -> Result<CallRequest, ArgsError> {
    let mut call = call_request_to_ask(agent, arguments, policy)?;
    if call.beyond_bounds.is_empty() {
        return Ok(call);
    }
    Err(call.beyond_bounds.remove(0).into())
}

/// Like [`call_request`], but a bound the person may lift is noted in `beyond_bounds`, not
/// refused; any other refusal is the error, unless such a bound came first.
pub fn call_request_to_ask(
    agent: Agent,
    arguments: Option<JsonObject>,
    policy: &Policy,
) -> Result<CallRequest, ArgsError> {
    let mut beyond_bounds = Vec::new();
    match read_call(agent, arguments, policy, &mut beyond_bounds) {
        Ok(call) => Ok(CallRequest {
            beyond_bounds,
            ..call
        }),
        // The first refusal is the error, as when every bound refused outright.
        Err(_) if !beyond_bounds.is_empty() => Err(beyond_bounds.remove(0).into()),
        Err(error) => Err(error),
    }
}

fn read_call(
    agent: Agent,
    arguments: Option<JsonObject>,
    policy: &Policy,
    beyond_bounds: &mut Vec<Refusal>,
) -> Result<CallRequest, ArgsError> {
    let arguments = arguments.unwrap_or_default();
    refuse_other_agents_arguments(agent, &arguments)?;
    let args: ToolArgs = serde_json::from_value(Value::Object(arguments))
        .map_err(|source| ArgsError::Invalid { agent, source })?;
    if args.timeout_secs == Some(0) {
        return Err(ArgsError::ZeroTimeout);
    }
    let workspace = workspace(args.workspace, policy, beyond_bounds)?;
    for dir in &agent.profile().writable {
        policy.resolve_inside_roots("the agent's writable directory", dir)?;
    }
    if let Err(refusal) = policy.check_permission(args.permission) {
        beyond_bounds.push(refusal);
    }
    let mut request = RunRequest::new(args.prompt, workspace.clone());
    request.model = given(args.model);
    request.session_id = given(args.session_id);
    request.fork = args.fork;
    request.effort = args.effort;
    request.timeout = args.timeout_secs.map(Duration::from_secs);
    request.append_system_prompt = given(args.append_system_prompt);
    request.permission = args.permission;
    request.output_schema = args
        .output_schema
        .map(|schema| OutputSchema::new(Value::Object(schema)))
        .transpose()?;
    let isolation = args.isolation.or(agent.profile().isolation);
    set_tree_options(&mut request, isolation, args.base, given(args.check))?;
    let save_to = given(args.save_to.map(|p| p.to_string_lossy().into_owned()))
        .map(|path| Policy::resolve_inside_workspace("save_to", Path::new(&path), &workspace))
        .transpose()?;
    Ok(CallRequest {
        agent,
        run: request,
        background: args.background,
        handoff_after_secs: args.handoff_after_secs,
        save_to,
        beyond_bounds: Vec::new(),
    })
}

/// The call's workspace, resolved: the one it names, else the server's. One outside the roots
/// is kept, and noted in `beyond_bounds`, if the person may allow it.
fn workspace(
    named: Option<PathBuf>,
    policy: &Policy,
    beyond_bounds: &mut Vec<Refusal>,
) -> Result<PathBuf, ArgsError> {
    let workspace = match given(named.map(|p| p.to_string_lossy().into_owned())) {
        Some(workspace) => PathBuf::from(workspace),
        None => policy
            .default_workspace()
            .ok_or(ArgsError::NoWorkspace)?
            .to_path_buf(),
    };
    let (resolved, beyond) = policy.resolve_workspace(&workspace)?;
    beyond_bounds.extend(beyond);
    Ok(resolved)
}

/// Refuses an argument only other CLIs take, naming them.
fn refuse_other_agents_arguments(agent: Agent, arguments: &JsonObject) -> Result<(), ArgsError> {
    let Some(field) = extras().find(|field| arguments.contains_key(*field) && !takes(agent, field))
    else {
        return Ok(());
    };
    let only: Vec<_> = BUILTINS
        .iter()
        .filter(|cli| cli.extra_arguments().contains(&field))
        .map(|cli| cli.name())
        .collect();
    Err(ArgsError::NotForThisAgent {
        agent,
        field,
        only: only.join(", "),
    })
}

/// Where the run works and what checks it: the call's word, else the agent's default, else
/// in place.
fn set_tree_options(
    request: &mut RunRequest,
    isolation: Option<Isolation>,
    base: Option<BaseArg>,
    check: Option<String>,
) -> Result<(), ArgsError> {
    if check.is_some() && request.permission == Permission::ReadOnly {
        return Err(ArgsError::CheckNeedsWrite);
    }
    request.check = check;
    request.isolation = isolation.unwrap_or_default();
    request.base = match base {
        Some(BaseArg::Head) => Base::Head,
        Some(BaseArg::Working) | None => Base::WorkingState,
    };
    Ok(())
}

fn given(value: Option<String>) -> Option<String> {
    value.filter(|text| !text.trim().is_empty())
}

impl ArgsError {
    /// The call's error result. Arguments can be quoted back in a parse error, and may hold a
    /// key: the text is masked like every error result's.
    pub fn to_result(&self) -> CallToolResult {
        error_result(self.to_string())
    }
}

/// The agent tools of `offers`: their schemas are derived once and shared.
pub(super) fn tools(offers: &[Offer]) -> Vec<Tool> {
    let arguments = arguments_schema::<ToolArgs>();
    let mut output = schema_for_output::<JobReport>().as_ref().clone();
    drop_numeric_formats(&mut output);
    let output = Arc::new(output);
    offers
        .iter()
        .map(|offer| tool(offer, &arguments, &output))
        .collect()
}

fn tool(offer: &Offer, arguments: &JsonObject, output: &Arc<JsonObject>) -> Tool {
    let agent = offer.agent;
    let title = title(agent);
    let input = input_schema(agent, arguments.clone());
    let mut tool = Tool::new(agent.name(), description(offer), input);
    tool.title = Some(title.clone());
    tool.output_schema = Some(Arc::clone(output));
    // It runs another agent with the model provider: open world, and it may write files.
    tool.annotations = Some(
        ToolAnnotations::with_title(&title)
            .read_only(false)
            .open_world(true),
    );
    tool
}

/// The arguments' schema without the fields `agent`'s CLI does not take.
fn input_schema(agent: Agent, mut schema: JsonObject) -> Arc<JsonObject> {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for field in extras().filter(|field| !takes(agent, field)) {
            properties.remove(field);
        }
    }
    Arc::new(schema)
}

/// A built-in agent's title is its CLI's; a custom agent's says which CLI it runs.
fn title(agent: Agent) -> String {
    let title = agent.cli().title();
    if agent.is_builtin() {
        title.to_owned()
    } else {
        format!("{} ({title})", agent.name())
    }
}

/// The configured note, then what the CLI is good at and cannot do. How a call works is the
/// same for every agent tool: the server's instructions say it once.
fn description(offer: &Offer) -> String {
    let mut text = offer
        .note
        .as_ref()
        .map_or_else(String::new, |note| format!("{note}\n\n"));
    text.push_str(offer.agent.cli().description());
    text
}

#[cfg(test)]
mod tests {
    use cli_agent_engine::clis;
    use serde_json::json;

    use super::*;

    fn args(value: Value) -> Option<JsonObject> {
        match value {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    /// A directory of the test's own under the temp dir, by its real path (no symlink on the
    /// way), the only root its policy allows: wherever the checkout (the working directory a
    /// relative path resolves against) lives, it is not inside. Removed when dropped.
    struct Root {
        path: PathBuf,
        _dir: tempfile::TempDir,
    }

    impl Root {
        fn new(name: &str) -> Self {
            let dir = cli_agent_test_support::common::temp_dir(&format!("cam-tools-{name}"));
            let path = cli_agent_engine::plain_path::canonicalize(dir.path()).expect("root");
            Self { path, _dir: dir }
        }

        /// Calls may work in this root, up to workspace-write.
        fn policy(&self) -> Policy {
            Policy::new(std::slice::from_ref(&self.path), Permission::WorkspaceWrite)
                .expect("policy")
        }
    }

    #[test]
    fn arguments_become_a_request_with_defaults_and_blank_strings_dropped() {
        let root = Root::new("defaults");
        let request = call_request(
            clis::CLAUDE,
            args(
                json!({"prompt": "hi", "model": " ", "append_system_prompt": "be brief",
                        "timeout_secs": 5, "workspace": root.path}),
            ),
            &root.policy(),
        )
        .expect("valid")
        .run;
        assert_eq!(request.workspace, root.path);
        assert_eq!(request.permission, Permission::ReadOnly);
        assert_eq!(request.model, None);
        assert_eq!(request.timeout, Some(Duration::from_secs(5)));
        assert_eq!(request.append_system_prompt.as_deref(), Some("be brief"));
    }

    #[test]
    fn wrong_or_out_of_bounds_arguments_are_refused_with_the_reason() {
        let root = Root::new("refused");
        let cases = [
            (json!({}), "missing field `prompt`"),
            (
                json!({"prompt": "x", "permission": "all"}),
                "unknown variant `all`",
            ),
            (json!({"prompt": "x", "cwd": "/"}), "unknown field `cwd`"),
            (json!({"prompt": "x", "timeout_secs": 0}), "at least 1"),
            (
                json!({"prompt": "x", "append_system_prompt": "y"}),
                "only claude takes it",
            ),
            (
                json!({"prompt": "x", "workspace": "/etc"}),
                // Windows adds where `/etc` resolved (`Z:\etc` under Wine).
                "is outside the directories this server allows",
            ),
            (
                json!({"prompt": "x", "workspace": "relative/dir"}),
                "CAM_ALLOWED_ROOTS",
            ),
            (
                json!({"prompt": "x", "workspace": root.path, "permission": "unlimited"}),
                "CAM_MAX_PERMISSION",
            ),
        ];
        for (value, expected) in cases {
            let error = call_request(clis::CODEX, args(value), &root.policy())
                .expect_err(expected)
                .to_string();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn a_tool_lists_only_the_arguments_its_cli_supports() {
        let properties = |agent| {
            let schema = input_schema(agent, arguments_schema::<ToolArgs>());
            let names: Vec<String> = schema["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .cloned()
                .collect();
            names
        };
        assert!(properties(clis::CLAUDE).contains(&"append_system_prompt".to_owned()));
        assert!(!properties(clis::CODEX).contains(&"append_system_prompt".to_owned()));
        assert!(properties(clis::GEMINI).contains(&"session_id".to_owned()));
    }

    #[test]
    fn the_schemas_use_only_formats_json_schema_defines() {
        let [tool] = &tools(&[Offer::from(clis::CODEX)])[..] else {
            panic!("one offer, one tool");
        };
        let tool = tool.clone();
        for schema in [Some(tool.input_schema.clone()), tool.output_schema.clone()] {
            let text = serde_json::to_string(&schema).expect("json");
            assert!(!text.contains("\"format\""), "{text}");
            assert!(text.contains("\"minimum\""), "ranges stay: {text}");
        }
        // What every tool would repeat: no dialect, no "or null", no default that is absence.
        let input = serde_json::to_string(&tool.input_schema).expect("json");
        for repeated in [
            "$schema",
            "\"null\"",
            "\"default\":null",
            "\"default\":false",
        ] {
            assert!(!input.contains(repeated), "{repeated} in {input}");
        }
        let output = serde_json::to_string(&tool.output_schema).expect("json");
        assert!(
            output.contains("\"null\""),
            "results keep their nulls: {output}"
        );
    }

    #[test]
    fn a_null_argument_is_still_taken_as_absent() {
        let root = Root::new("null");
        let arguments = json!({"prompt": "x", "workspace": root.path, "model": null,
            "session_id": null, "isolation": null, "output_schema": null, "timeout_secs": null});
        let request = call_request(clis::CODEX, args(arguments), &root.policy())
            .expect("nulls are absent")
            .run;
        assert_eq!((request.model, request.session_id), (None, None));
    }
}
