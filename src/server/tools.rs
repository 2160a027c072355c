//! The tools: one per CLI, with what the calling model needs to choose and call it, and the
//! arguments each call carries.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cli_agent_engine::clis::BUILTINS;
use cli_agent_engine::{Agent, Permission, RunRequest};
use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::policy::{Policy, Refusal};
use super::result::JobReport;

/// The arguments of every tool. Fields only some CLIs support are named by their
/// [`extra_arguments`](cli_agent_engine::clis::Cli::extra_arguments).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolArgs {
    /// What the agent should do, in plain words. It reaches the CLI as text, never as flags.
    pub prompt: String,
    /// The directory the agent works in (default: the server's working directory). It must
    /// exist, inside a directory this server allows. To resume a session, pass the workspace
    /// it started in.
    pub workspace: Option<PathBuf>,
    /// What the agent may do.
    #[serde(default)]
    #[schemars(schema_with = "permission_schema")]
    pub permission: Permission,
    /// The model to ask for (default: the CLI's own default).
    pub model: Option<String>,
    /// Continue the conversation of an earlier call: pass the `session_id` of its result.
    /// Without it, every call starts a fresh conversation that knows nothing of earlier calls.
    pub session_id: Option<String>,
    /// This call's time limit in seconds (default: the server's, 30 minutes unless set).
    #[schemars(range(min = 1))]
    pub timeout_secs: Option<u64>,
    /// Instructions appended to the agent's system prompt.
    pub append_system_prompt: Option<String>,
    /// Start the run as a background job and answer at once with its `job_id`; collect it
    /// with `job_wait`. Start several to run agents in parallel.
    #[serde(default)]
    pub background: bool,
    /// Answer after this many seconds even if the run goes on, with its `job_id` and the
    /// `job_wait` call that collects it (default: the server's, 45 unless set; 0: never).
    pub handoff_after_secs: Option<u64>,
    /// A file inside the workspace to append the whole answer to when the run ends (the
    /// result itself may carry only the answer's head and tail).
    pub save_to: Option<PathBuf>,
}

/// A call's run request and what it asks of the job around it.
#[derive(Debug)]
pub struct CallRequest {
    pub run: RunRequest,
    pub background: bool,
    /// `Some(0)` never hands off; `None` takes the server's default.
    pub handoff_after_secs: Option<u64>,
    pub save_to: Option<PathBuf>,
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
        "default": "read-only",
        "description": "What the agent may do. read-only (default): read files and run \
            read-only commands, never write. workspace-write: edit files in the workspace and \
            run commands there. unlimited: anything, anywhere (use only on a disposable machine). \
            The server refuses levels above its configured ceiling (workspace-write unless set)."
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
    #[error(transparent)]
    Refused(#[from] Refusal),
}

/// Read a call's arguments into a run request within `policy`'s bounds. Blank optional
/// strings count as absent: calling models often fill every field.
pub fn call_request(
    agent: Agent,
    arguments: Option<JsonObject>,
    policy: &Policy,
) -> Result<CallRequest, ArgsError> {
    let arguments = arguments.unwrap_or_default();
    if let Some(field) =
        extras().find(|field| arguments.contains_key(*field) && !takes(agent, field))
    {
        let only: Vec<_> = BUILTINS
            .iter()
            .filter(|cli| cli.extra_arguments().contains(&field))
            .map(|cli| cli.name())
            .collect();
        return Err(ArgsError::NotForThisAgent {
            agent,
            field,
            only: only.join(", "),
        });
    }
    let args: ToolArgs = serde_json::from_value(Value::Object(arguments))
        .map_err(|source| ArgsError::Invalid { agent, source })?;
    if args.timeout_secs == Some(0) {
        return Err(ArgsError::ZeroTimeout);
    }
    let workspace = match given(args.workspace.map(|p| p.to_string_lossy().into_owned())) {
        Some(workspace) => PathBuf::from(workspace),
        None => policy
            .default_workspace()
            .ok_or(ArgsError::NoWorkspace)?
            .to_path_buf(),
    };
    let workspace = policy.resolve_inside_roots("workspace", &workspace)?;
    policy.check_permission(args.permission)?;
    let mut request = RunRequest::new(agent, args.prompt, workspace.clone());
    request.permission = args.permission;
    request.model = given(args.model);
    request.session_id = given(args.session_id);
    request.timeout = args.timeout_secs.map(Duration::from_secs);
    request.append_system_prompt = given(args.append_system_prompt);
    let save_to = given(args.save_to.map(|p| p.to_string_lossy().into_owned()))
        .map(|path| Policy::resolve_inside_workspace("save_to", Path::new(&path), &workspace))
        .transpose()?;
    Ok(CallRequest {
        run: request,
        background: args.background,
        handoff_after_secs: args.handoff_after_secs,
        save_to,
    })
}

fn given(value: Option<String>) -> Option<String> {
    value.filter(|text| !text.trim().is_empty())
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error(
        "no tool left to offer: --enable/CAM_ENABLE and --disable/CAM_DISABLE leave none of {0}"
    )]
    NoTools(String),
    #[error("{setting} names {error}")]
    Unknown {
        setting: &'static str,
        error: cli_agent_engine::agent::UnknownAgent,
    },
}

/// An agent the server may offer as a tool, with what its configuration adds.
#[derive(Clone, Debug)]
pub struct Offer {
    pub agent: Agent,
    /// Shown first in its tool's description.
    pub note: Option<String>,
    /// Its cap on runs at once (`CAM_<AGENT>_MAX_RUNS` overrides it).
    pub max_runs: Option<usize>,
}

impl From<Agent> for Offer {
    fn from(agent: Agent) -> Self {
        Self {
            agent,
            note: None,
            max_runs: None,
        }
    }
}

/// The tools this server offers, in a fixed order.
pub struct Catalogue {
    tools: Vec<(Agent, Tool)>,
}

impl Catalogue {
    /// Every offer named in `enable` (all when empty) that is not named in `disable`.
    pub fn new(
        offers: &[Offer],
        enable: &[String],
        disable: &[String],
    ) -> Result<Self, CatalogueError> {
        let agents: Vec<_> = offers.iter().map(|offer| offer.agent).collect();
        for (setting, names) in [
            ("--enable/CAM_ENABLE", enable),
            ("--disable/CAM_DISABLE", disable),
        ] {
            for name in names {
                cli_agent_engine::agent::find(&agents, name)
                    .map_err(|error| CatalogueError::Unknown { setting, error })?;
            }
        }
        let chosen = |name: &str| {
            (enable.is_empty() || enable.iter().any(|e| e == name))
                && !disable.iter().any(|d| d == name)
        };
        let tools: Vec<_> = offers
            .iter()
            .filter(|offer| chosen(offer.agent.name()))
            .map(|offer| (offer.agent, tool(offer)))
            .collect();
        if tools.is_empty() {
            return Err(CatalogueError::NoTools(cli_agent_engine::agent::names(
                &agents,
            )));
        }
        Ok(Self { tools })
    }

    pub fn tools(&self) -> Vec<Tool> {
        self.tools.iter().map(|(_, tool)| tool.clone()).collect()
    }

    pub fn agent(&self, name: &str) -> Option<Agent> {
        self.tools
            .iter()
            .find(|(_, tool)| tool.name == name)
            .map(|(agent, _)| *agent)
    }

    pub fn names(&self) -> String {
        let names: Vec<_> = self.tools.iter().map(|(agent, _)| agent.name()).collect();
        names.join(", ")
    }
}

fn tool(offer: &Offer) -> Tool {
    let agent = offer.agent;
    let title = title(agent);
    let mut tool = Tool::new(agent.name(), description(offer), input_schema(agent));
    tool.title = Some(title.clone());
    let mut output = schema_for_output::<JobReport>().as_ref().clone();
    drop_numeric_formats(&mut output);
    tool.output_schema = Some(Arc::new(output));
    // It runs another agent with the model provider: open world, and it may write files.
    tool.annotations = Some(
        ToolAnnotations::with_title(&title)
            .read_only(false)
            .open_world(true),
    );
    tool
}

fn input_schema(agent: Agent) -> Arc<JsonObject> {
    let mut schema = arguments_schema::<ToolArgs>();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for field in extras().filter(|field| !takes(agent, field)) {
            properties.remove(field);
        }
    }
    Arc::new(schema)
}

/// The `inputSchema` of a tool whose arguments are `T`, in formats clients accept.
pub(super) fn arguments_schema<T: JsonSchema + 'static>() -> JsonObject {
    // The schema is derived from a fixed type: failing here is a bug caught by any test.
    let mut schema = schema_for_input::<T>()
        .expect("argument types are structs, so their schemas are objects")
        .as_ref()
        .clone();
    drop_numeric_formats(&mut schema);
    schema
}

/// schemars writes Rust's number types as formats (`uint64`, `int32`, `double`) that JSON
/// Schema does not define; strict validators in clients (Claude Code's) warn about each one.
/// The ranges stay in `minimum`.
fn drop_numeric_formats(schema: &mut JsonObject) {
    let numeric = |format: &Value| {
        format.as_str().is_some_and(|f| {
            f.starts_with("int") || f.starts_with("uint") || f == "double" || f == "float"
        })
    };
    if schema.get("format").is_some_and(numeric) {
        schema.remove("format");
    }
    for value in schema.values_mut() {
        match value {
            Value::Object(inner) => drop_numeric_formats(inner),
            Value::Array(items) => items
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(drop_numeric_formats),
            _ => {}
        }
    }
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

/// What the CLI is good at, the configured note, then how a call works.
fn description(offer: &Offer) -> String {
    let strengths = offer.agent.cli().description();
    let strengths = match &offer.note {
        Some(note) => format!("{note}\n\n{strengths}"),
        None => strengths.to_owned(),
    };
    format!(
        "{strengths}\n\nThe agent runs headless in `workspace` (default: the server's working \
         directory) with `permission` read-only unless you pass another level, and returns its \
         final answer as text, with a structured outcome (status, session_id, token usage, \
         tools used, error and hint). Each call starts a fresh conversation unless you pass \
         the `session_id` of an earlier result. A call can take minutes; the server reports \
         progress while it works. A call still running after `handoff_after_secs` (45 s unless \
         the server sets otherwise) answers with its `job_id` while the run carries on: collect \
         it with `job_wait`. To run agents in parallel, start each with `background: true` and \
         collect them all with one `job_wait`."
    )
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

    /// Calls may work under the temp dir, up to workspace-write.
    fn policy() -> Policy {
        Policy::new(&[std::env::temp_dir()], Permission::WorkspaceWrite).expect("policy")
    }

    fn temp_dir() -> PathBuf {
        std::fs::canonicalize(std::env::temp_dir()).expect("temp dir")
    }

    #[test]
    fn arguments_become_a_request_with_defaults_and_blank_strings_dropped() {
        let request = call_request(
            clis::CLAUDE,
            args(
                json!({"prompt": "hi", "model": " ", "append_system_prompt": "be brief",
                        "timeout_secs": 5, "workspace": std::env::temp_dir()}),
            ),
            &policy(),
        )
        .expect("valid")
        .run;
        assert_eq!(request.workspace, temp_dir());
        assert_eq!(request.permission, Permission::ReadOnly);
        assert_eq!(request.model, None);
        assert_eq!(request.timeout, Some(Duration::from_secs(5)));
        assert_eq!(request.append_system_prompt.as_deref(), Some("be brief"));
    }

    #[test]
    fn wrong_or_out_of_bounds_arguments_are_refused_with_the_reason() {
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
                "workspace /etc is outside the directories this server allows",
            ),
            (
                json!({"prompt": "x", "workspace": "relative/dir"}),
                "CAM_ALLOWED_ROOTS",
            ),
            (
                json!({"prompt": "x", "workspace": temp_dir(), "permission": "unlimited"}),
                "CAM_MAX_PERMISSION",
            ),
        ];
        for (value, expected) in cases {
            let error = call_request(clis::CODEX, args(value), &policy())
                .expect_err(expected)
                .to_string();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn a_tool_lists_only_the_arguments_its_cli_supports() {
        let properties = |agent| {
            let schema = input_schema(agent);
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
        let tool = tool(&Offer::from(clis::CODEX));
        for schema in [Some(tool.input_schema), tool.output_schema] {
            let text = serde_json::to_string(&schema).expect("json");
            assert!(!text.contains("\"format\""), "{text}");
            assert!(text.contains("\"minimum\""), "ranges stay: {text}");
        }
    }

    #[test]
    fn enable_and_disable_choose_the_tools_in_a_fixed_order() {
        let offers: Vec<Offer> = clis::builtin_agents().map(Offer::from).collect();
        let names = |list: &[&str]| list.iter().map(|name| name.to_string()).collect::<Vec<_>>();
        let all = Catalogue::new(&offers, &[], &[]).expect("tools");
        assert_eq!(
            all.names(),
            "codex, claude, gemini, opencode, qwen, copilot"
        );
        let some = Catalogue::new(&offers, &names(&["gemini", "codex"]), &names(&["gemini"]))
            .expect("tools");
        assert_eq!(some.names(), "codex");
        assert_eq!(some.agent("gemini"), None);
        assert!(Catalogue::new(&offers, &names(&["codex"]), &names(&["codex"])).is_err());
        let unknown = Catalogue::new(&offers, &names(&["cursor"]), &[])
            .err()
            .expect("unknown");
        assert!(
            unknown.to_string().contains("unknown agent `cursor`"),
            "{unknown}"
        );
    }
}
