//! Prompts, which hosts offer as slash commands: each renders instructions for the host's
//! model to do a common piece of work with this server's tools, named as they are called.

use std::collections::HashMap;

use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Value, json};

use super::tools::Catalogue;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    SecondOpinion,
    Delegate,
    BestOf,
}

/// One argument of a prompt: its name, whether it must be given, and what it is.
struct Argument {
    name: &'static str,
    required: bool,
    description: &'static str,
}

const AGENT: Argument = Argument {
    name: "agent",
    required: true,
    description: "The agent to ask: one of this server's agent tools (codex, claude, ...).",
};
const AGENTS: Argument = Argument {
    name: "agents",
    required: true,
    description: "Two or more of this server's agent tools, comma-separated (e.g. codex, claude).",
};
const TASK: Argument = Argument {
    name: "task",
    required: true,
    description: "What the agent should do, in plain words.",
};
const FOCUS: Argument = Argument {
    name: "focus",
    required: false,
    description: "What the review should look at most closely (default: everything).",
};
const CHECK: Argument = Argument {
    name: "check",
    required: false,
    description: "A shell command that proves the work (tests, a build), run in each job's tree.",
};
const WORKSPACE: Argument = Argument {
    name: "workspace",
    required: false,
    description: "The directory to work in (default: the server's working directory).",
};

impl PromptKind {
    pub const ALL: [Self; 3] = [Self::SecondOpinion, Self::Delegate, Self::BestOf];

    pub fn name(self) -> &'static str {
        match self {
            Self::SecondOpinion => "second_opinion",
            Self::Delegate => "delegate",
            Self::BestOf => "best_of",
        }
    }

    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }

    fn description(self) -> &'static str {
        match self {
            Self::SecondOpinion => {
                "Another agent reviews the current change, read-only, and you \
                 weigh what it finds."
            }
            Self::Delegate => {
                "Hand a task to an agent in an isolated worktree, then review its \
                 changes and apply or discard them."
            }
            Self::BestOf => {
                "Run one task on several agents side by side, each isolated, then \
                 compare their changes and keep the best."
            }
        }
    }

    fn arguments(self) -> &'static [Argument] {
        match self {
            Self::SecondOpinion => &[AGENT, FOCUS, WORKSPACE],
            Self::Delegate => &[AGENT, TASK, CHECK, WORKSPACE],
            Self::BestOf => &[AGENTS, TASK, CHECK, WORKSPACE],
        }
    }

    pub fn prompt(self) -> Prompt {
        let arguments = self
            .arguments()
            .iter()
            .map(|argument| {
                PromptArgument::new(argument.name)
                    .with_description(argument.description)
                    .with_required(argument.required)
            })
            .collect();
        Prompt::new(self.name(), Some(self.description()), Some(arguments))
    }

    /// Whether the argument `name` of this prompt names agents.
    pub fn names_agents(self, name: &str) -> bool {
        matches!(name, "agent" | "agents")
            && self
                .arguments()
                .iter()
                .any(|argument| argument.name == name)
    }
}

pub fn list() -> Vec<Prompt> {
    PromptKind::ALL.map(PromptKind::prompt).to_vec()
}

/// The prompt `name` rendered with `arguments`.
pub fn get(
    name: &str,
    arguments: Option<&serde_json::Map<String, Value>>,
    catalogue: &Catalogue,
) -> Result<GetPromptResult, ErrorData> {
    let kind = PromptKind::named(name).ok_or_else(|| {
        let names: Vec<_> = PromptKind::ALL.map(PromptKind::name).to_vec();
        ErrorData::invalid_params(
            format!(
                "unknown prompt `{name}`: this server offers {}",
                names.join(", ")
            ),
            None,
        )
    })?;
    let given = read_arguments(kind, arguments)?;
    let text = match kind {
        PromptKind::SecondOpinion => second_opinion(&given, catalogue)?,
        PromptKind::Delegate => delegate(&given, catalogue)?,
        PromptKind::BestOf => best_of(&given, catalogue)?,
    };
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(kind.description()),
    )
}

/// The arguments given, blank ones dropped; a missing required one is an error naming it.
fn read_arguments(
    kind: PromptKind,
    arguments: Option<&serde_json::Map<String, Value>>,
) -> Result<HashMap<&'static str, String>, ErrorData> {
    let mut given = HashMap::new();
    for argument in kind.arguments() {
        let value = arguments
            .and_then(|arguments| arguments.get(argument.name))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|value| !value.is_empty());
        match value {
            Some(value) => {
                given.insert(argument.name, value.to_owned());
            }
            None if argument.required => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "prompt `{}` needs the argument `{}`: {}",
                        kind.name(),
                        argument.name,
                        argument.description
                    ),
                    None,
                ));
            }
            None => {}
        }
    }
    Ok(given)
}

/// The agent named, which must be one this server offers.
fn agent_named<'a>(name: &'a str, catalogue: &Catalogue) -> Result<&'a str, ErrorData> {
    match catalogue.agent(name) {
        Some(_) => Ok(name),
        None => Err(ErrorData::invalid_params(
            format!(
                "`{name}` is not an agent of this server: it offers {}",
                catalogue.names()
            ),
            None,
        )),
    }
}

/// An agent tool's arguments for a call, as JSON the model can copy.
fn call_arguments(given: &HashMap<&str, String>, prompt: &str, extra: Value) -> String {
    let mut call = json!({ "prompt": prompt });
    for (key, value) in extra.as_object().into_iter().flatten() {
        call[key] = value.clone();
    }
    for key in ["workspace", "check"] {
        if let Some(value) = given.get(key) {
            call[key] = json!(value);
        }
    }
    call.to_string()
}

fn second_opinion(
    given: &HashMap<&str, String>,
    catalogue: &Catalogue,
) -> Result<String, ErrorData> {
    let agent = agent_named(&given["agent"], catalogue)?;
    let focus = given
        .get("focus")
        .map(|focus| format!(" Look most closely at: {focus}."))
        .unwrap_or_default();
    let review = format!(
        "Review the uncommitted change in this workspace (git diff, git status and new files). \
         Say what is wrong or risky: bugs, missed cases, missing tests, unclear code, citing \
         file and line. Do not edit anything.{focus}"
    );
    let call = call_arguments(given, &review, json!({ "permission": "read-only" }));
    Ok(format!(
        "Get a second opinion on the current change from {agent}.\n\n\
         1. Call the `{agent}` tool with {call}.\n\
         2. If it answers with a job_id instead of an answer, collect it with job_wait \
         {{\"job_ids\": [\"<job_id>\"]}}.\n\
         3. Check each point it makes against the code yourself, then tell me which you agree \
         with, which you do not, and why."
    ))
}

fn delegate(given: &HashMap<&str, String>, catalogue: &Catalogue) -> Result<String, ErrorData> {
    let agent = agent_named(&given["agent"], catalogue)?;
    let call = call_arguments(given, &given["task"], isolated());
    Ok(format!(
        "Delegate this task to {agent}, in a worktree of its own so it cannot disturb the \
         workspace.\n\n\
         1. Call the `{agent}` tool with {call}. It answers with a job_id.\n\
         2. Wait for it with job_wait {{\"job_ids\": [\"<job_id>\"]}} (call again while it \
         still runs).\n\
         3. Review what it changed with job_diff {{\"job_id\": \"<job_id>\"}}, and its check \
         result if it has one.\n\
         4. If the change is right, apply it to the workspace with job_apply \
         {{\"job_id\": \"<job_id>\"}}; if not, drop it with job_discard {{\"job_id\": \
         \"<job_id>\"}}. Tell me what you kept and why."
    ))
}

fn best_of(given: &HashMap<&str, String>, catalogue: &Catalogue) -> Result<String, ErrorData> {
    let agents = given["agents"]
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| agent_named(name, catalogue))
        .collect::<Result<Vec<_>, _>>()?;
    let call = call_arguments(given, &given["task"], isolated());
    let tools = agents
        .iter()
        .map(|agent| format!("`{agent}`"))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(format!(
        "Run this task on {} agents side by side and keep the best result.\n\n\
         1. Call each of the tools {tools} with {call}, all before waiting: each answers at \
         once with a job_id and works in a worktree of its own.\n\
         2. Wait for them all with one job_wait {{\"job_ids\": [<every job_id>]}} (call again \
         while some still run).\n\
         3. Compare their changes with job_diff {{\"job_id\": \"<job_id>\"}} for each, and \
         their check results: correctness first, then the smallest clear change.\n\
         4. Apply the best with job_apply {{\"job_id\": \"<job_id>\"}} and drop the others \
         with job_discard. Tell me which you kept and why.",
        agents.len()
    ))
}

/// How a delegated task runs: writing, in a worktree, in the background.
fn isolated() -> Value {
    json!({ "permission": "workspace-write", "isolation": "worktree", "background": true })
}
