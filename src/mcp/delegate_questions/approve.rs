//! `approve`: one permission question of the CLI (`{tool_name, input}`) in, its verdict out,
//! as the text claude expects: `{"behavior":"allow","updatedInput":…}` or
//! `{"behavior":"deny","message":…}`.

use std::path::PathBuf;
use std::sync::Arc;

use cli_agent_engine::{Agent, Permission, RunRequest};
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::ask::{BeyondBounds, ask_person};

/// The endpoint's one tool.
pub const APPROVE: &str = "approve";

/// The most characters of a tool's input a question or denial quotes.
const INPUT_SHOWN: usize = 400;

/// claude's tools that edit files: never allowed to a read-only call (a shell command is, as
/// the kernel sandbox keeps it read-only).
const FILE_EDIT_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// What the CLI asks.
#[derive(Debug, Deserialize, JsonSchema)]
struct Question {
    /// The tool the agent wants to use.
    tool_name: String,
    /// The arguments it wants to call it with.
    #[serde(default)]
    input: Value,
}

/// The answer, as the CLI reads it.
#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "behavior", rename_all = "lowercase")]
enum Verdict {
    Allow {
        #[serde(rename = "updatedInput")]
        updated_input: Value,
    },
    Deny {
        message: String,
    },
}

/// Answers one run's questions: asks the person through `peer`, within the run's level.
#[derive(Clone)]
pub struct Approver {
    agent: Agent,
    workspace: PathBuf,
    permission: Permission,
    peer: Option<Peer<RoleServer>>,
    how: BeyondBounds,
}

impl Approver {
    /// `None` at `unlimited`, where the CLI asks nothing.
    pub fn for_run(
        run: &RunRequest,
        peer: Option<Peer<RoleServer>>,
        how: BeyondBounds,
    ) -> Option<Self> {
        (run.permission < Permission::Unlimited).then(|| Self {
            agent: run.agent,
            workspace: run.workspace.clone(),
            permission: run.permission,
            peer,
            how,
        })
    }

    async fn verdict(&self, question: Question) -> Verdict {
        let asked = self.describe(&question);
        if self.permission == Permission::ReadOnly
            && FILE_EDIT_TOOLS.contains(&question.tool_name.as_str())
        {
            return self.deny(&asked, "a read-only call edits no files");
        }
        let BeyondBounds::Ask { timeout } = self.how else {
            return self.deny(
                &asked,
                "this server never asks the person (--ask-beyond-bounds refuse)",
            );
        };
        let Some(peer) = &self.peer else {
            return self.deny(&asked, "the call's client is gone, so nobody can be asked");
        };
        match ask_person(peer, self.ask(&asked), timeout).await {
            Ok(()) => {
                tracing::info!(agent = %self.agent, "the person allowed {asked}");
                Verdict::Allow {
                    updated_input: question.input,
                }
            }
            Err(no_leave) => self.deny(&asked, &no_leave.to_string()),
        }
    }

    /// `claude's Bash {"command":…}`, the input cut short.
    fn describe(&self, question: &Question) -> String {
        let mut input = question.input.to_string();
        if input.chars().count() > INPUT_SHOWN {
            input = input.chars().take(INPUT_SHOWN).chain(['…']).collect();
        }
        format!("{}'s {} {input}", self.agent, question.tool_name)
    }

    fn ask(&self, asked: &str) -> String {
        format!(
            "The {} agent asks for a permission its call did not give it:\n{asked}\n\
             Workspace: {}\nPermission of the call: {}\n\nAllow it?",
            self.agent,
            self.workspace.display(),
            self.permission
        )
    }

    fn deny(&self, asked: &str, why: &str) -> Verdict {
        tracing::info!(agent = %self.agent, "denied {asked}: {why}");
        let message = format!(
            "cli-agent-mcp denied {asked}: {why}. To allow it, call with a higher permission \
             level than {} or, where the level allows it, from an MCP client that supports \
             elicitation and allow it when asked",
            self.permission
        );
        Verdict::Deny { message }
    }
}

fn tool() -> Tool {
    let schema =
        schema_for_input::<Question>().expect("Question is a struct, its schema an object");
    Tool::new(
        APPROVE,
        "Asks the person whether the agent may use a tool its permission level does not give it.",
        Arc::new(schema.as_ref().clone()),
    )
}

impl ServerHandler for Approver {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: vec![tool()],
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != APPROVE {
            let message = format!(
                "unknown tool `{}`: this endpoint offers `{APPROVE}`",
                request.name
            );
            return Err(ErrorData::invalid_params(message, None));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let question: Question = serde_json::from_value(arguments).map_err(|error| {
            ErrorData::invalid_params(
                format!("`{APPROVE}` takes {{tool_name, input}}: {error}"),
                None,
            )
        })?;
        let verdict = serde_json::to_string(&self.verdict(question).await)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(verdict)]).into())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cli_agent_engine::clis;
    use serde_json::json;

    use super::*;

    fn approver(permission: Permission, how: BeyondBounds) -> Approver {
        let mut run = RunRequest::new(clis::CLAUDE, "fix it", "/srv/project");
        run.permission = permission;
        Approver::for_run(&run, None, how).expect("below unlimited")
    }

    fn question(tool_name: &str, input: Value) -> Question {
        Question {
            tool_name: tool_name.to_owned(),
            input,
        }
    }

    const ASK: BeyondBounds = BeyondBounds::Ask {
        timeout: Duration::from_secs(1),
    };

    #[test]
    fn verdicts_read_as_claude_expects() {
        let allow = Verdict::Allow {
            updated_input: json!({"command": "ls"}),
        };
        assert_eq!(
            serde_json::to_value(allow).unwrap(),
            json!({"behavior": "allow", "updatedInput": {"command": "ls"}})
        );
        let deny = Verdict::Deny {
            message: "no".into(),
        };
        assert_eq!(
            serde_json::to_value(deny).unwrap(),
            json!({"behavior": "deny", "message": "no"})
        );
    }

    #[tokio::test]
    async fn what_the_level_forbids_or_nobody_can_answer_is_denied_with_how_to_allow_it() {
        let cases = [
            (
                Permission::ReadOnly,
                ASK,
                "Write",
                "a read-only call edits no files",
            ),
            (
                Permission::ReadOnly,
                BeyondBounds::Refuse,
                "Bash",
                "--ask-beyond-bounds refuse",
            ),
            (
                Permission::WorkspaceWrite,
                ASK,
                "WebFetch",
                "the call's client is gone",
            ),
        ];
        for (permission, how, tool_name, why) in cases {
            let asked = question(tool_name, json!({"file_path": "/srv/project/a"}));
            let Verdict::Deny { message } = approver(permission, how).verdict(asked).await else {
                panic!("{tool_name} at {permission} was allowed");
            };
            for expected in [tool_name, why, "/srv/project/a", "higher permission level"] {
                assert!(message.contains(expected), "{expected:?} in {message}");
            }
        }
    }

    #[test]
    fn nothing_asks_at_unlimited() {
        let mut run = RunRequest::new(clis::CLAUDE, "fix it", "/srv/project");
        run.permission = Permission::Unlimited;
        assert!(Approver::for_run(&run, None, ASK).is_none());
    }
}
