//! `approve`: one permission question of the CLI (`{tool_name, input}`) in, its verdict out,
//! as the text claude expects: `{"behavior":"allow","updatedInput":…}` or
//! `{"behavior":"deny","message":…}`.

use std::path::PathBuf;
use std::sync::Arc;

use cli_agent_engine::question;
use cli_agent_engine::{
    Agent, AgentEvent, Permission, PersonAnswer, PersonQuestion, PersonWait, QuestionAbout,
    RunRequest,
};
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jobs::Jobs;
use crate::jobs::store::{JobId, Recorder};
use crate::mcp::ask::{BeyondBounds, Client, NoLeave};

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

/// How a question was settled, before it becomes the CLI's verdict and a transcript event.
struct Ruling {
    answer: PersonAnswer,
    /// The client the person answered through; `None` when the server answered itself.
    answered_by: Option<String>,
    /// Why it was not allowed.
    why: String,
}

impl Ruling {
    /// Denied by the server itself, nobody asked.
    fn unasked(answer: PersonAnswer, why: &str) -> Self {
        Self {
            answer,
            answered_by: None,
            why: why.to_owned(),
        }
    }
}

/// Who a run's questions go to, and where they are kept.
pub struct Asking {
    /// The client that made the call, or why the person cannot be asked through it.
    pub client: Result<Client, NoLeave>,
    pub how: BeyondBounds,
    /// The job's transcript, where each question and its answer is recorded.
    pub transcript: Option<Recorder>,
    /// The run's job: its progress line says when the person is asked, and there a question
    /// nobody can be asked through the client may wait.
    pub job: Option<QuestionsJob>,
    /// The run's, held while a question waits on the person: the CLI is silent meanwhile.
    pub wait: PersonWait,
}

#[cfg(test)]
impl Asking {
    /// Nobody to ask through a client, `transcript` to record in, nothing parked.
    pub fn nobody(how: BeyondBounds, transcript: Option<Recorder>) -> Self {
        Self {
            client: Err(NoLeave::ClientGone),
            how,
            transcript,
            job: None,
            wait: PersonWait::default(),
        }
    }
}

/// The job a run's questions are about.
pub struct QuestionsJob {
    pub jobs: Arc<Jobs>,
    pub id: JobId,
    /// Whether a question nobody can be asked through the client waits for the person on
    /// the job's dashboard page (`--park-questions`) instead of being denied.
    pub park: bool,
}

impl QuestionsJob {
    /// Say on the job's progress line what is asked now, or how it was answered.
    fn say(&self, line: String) {
        if let Some(job) = self.jobs.live(&self.id) {
            job.progress.set(line);
        }
    }
}

/// Answers one run's questions: asks the person through the client, or parks the question
/// for the dashboard, within the run's level, and records each question and its answer in the
/// job's transcript.
#[derive(Clone)]
pub struct Approver {
    agent: Agent,
    workspace: PathBuf,
    permission: Permission,
    asking: Arc<Asking>,
}

impl Approver {
    /// `None` at `unlimited`, where the CLI asks nothing.
    pub fn for_run(agent: Agent, run: &RunRequest, asking: Asking) -> Option<Self> {
        (run.permission < Permission::Unlimited).then(|| Self {
            agent,
            workspace: run.workspace.clone(),
            permission: run.permission,
            asking: Arc::new(asking),
        })
    }

    async fn verdict(&self, question: Question) -> Verdict {
        let input = shown_input(&question.input);
        let asked = format!("{}'s {} {input}", self.agent, question.tool_name);
        let ruling = self.rule(&question.tool_name, &asked).await;
        self.record(question.tool_name, input, &ruling);
        match ruling.answer {
            PersonAnswer::Allowed => {
                tracing::info!(agent = %self.agent, "the person allowed {asked}");
                Verdict::Allow {
                    updated_input: question.input,
                }
            }
            _ => self.deny(&asked, &ruling.why),
        }
    }

    /// Settle the question `asked` about `tool`: without asking what the level forbids, else
    /// by the person's answer through the client or, where nobody can be asked there and
    /// questions are parked, on the dashboard.
    async fn rule(&self, tool: &str, asked: &str) -> Ruling {
        let _waiting = self.asking.wait.begin();
        let ruling = self.rule_through_client(tool, asked).await;
        let ruling = match (&self.asking.job, ruling.answer) {
            (Some(job), PersonAnswer::NobodyToAsk | PersonAnswer::TimedOut) if job.park => {
                self.park(job, asked, ruling).await
            }
            _ => ruling,
        };
        if let Some(job) = &self.asking.job {
            job.say(format!("{asked}: {}", ruling.answer.name()));
        }
        ruling
    }

    /// Wait for the person's answer on the job's dashboard page; `unanswered_by_client` is
    /// how it was settled through the client.
    async fn park(
        &self,
        parking: &QuestionsJob,
        asked: &str,
        unanswered_by_client: Ruling,
    ) -> Ruling {
        let question = format!(
            "{asked}\nNot asked through the client: {}.\nWorkspace: {}\nPermission of the \
             call: {}\n\nAllow it?",
            unanswered_by_client.why,
            self.workspace.display(),
            self.permission
        );
        tracing::info!(agent = %self.agent, job = %parking.id, "parked for the dashboard: {asked}");
        let settled = parking.jobs.ask_on_dashboard(&parking.id, &question).await;
        let why = match (settled.answer, &settled.unanswered) {
            (PersonAnswer::Allowed, _) => String::new(),
            // Why the client could not be asked, then why the dashboard could not either.
            (_, Some(unanswered)) => format!("{}; {unanswered}", unanswered_by_client.why),
            _ => settled.why_not(),
        };
        Ruling {
            answer: settled.answer,
            answered_by: settled.answered_by(),
            why,
        }
    }

    /// Settle the question through the client, or without asking.
    async fn rule_through_client(&self, tool: &str, asked: &str) -> Ruling {
        if self.permission == Permission::ReadOnly && FILE_EDIT_TOOLS.contains(&tool) {
            let why = "a read-only call edits no files";
            return Ruling::unasked(PersonAnswer::DeniedWithoutAsking, why);
        }
        let BeyondBounds::Ask { timeout } = self.asking.how else {
            let why = "this server never asks the person (--ask-beyond-bounds refuse)";
            return Ruling::unasked(PersonAnswer::DeniedWithoutAsking, why);
        };
        let (client, job) = match (&self.asking.client, &self.asking.job) {
            (Ok(client), Some(job)) => (client, job),
            (Err(no_leave), _) => return Ruling::unasked(no_leave.answer(), &no_leave.to_string()),
            (Ok(_), None) => {
                let why = NoLeave::ClientGone.to_string();
                return Ruling::unasked(PersonAnswer::NobodyToAsk, &why);
            }
        };
        let name = client.name();
        job.say(format!("asking the person through {name}: {asked}"));
        match client.ask(&job.id, self.ask(asked), timeout).await {
            Ok(()) => Ruling {
                answer: PersonAnswer::Allowed,
                answered_by: Some(name),
                why: String::new(),
            },
            Err(no_leave) => Ruling {
                answer: no_leave.answer(),
                answered_by: no_leave.by_the_person().then_some(name),
                why: no_leave.to_string(),
            },
        }
    }

    /// The question and its answer, in the job's transcript.
    fn record(&self, tool: String, input: String, ruling: &Ruling) {
        let Some(transcript) = &self.asking.transcript else {
            return;
        };
        let question = PersonQuestion {
            about: QuestionAbout::ToolPermission { tool, input },
            answer: ruling.answer,
            why: ruling.answered_by.is_none().then(|| ruling.why.clone()),
            answered_by: ruling.answered_by.clone(),
        };
        transcript.events(&[AgentEvent::Question(question)]);
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
        let how_to_allow = format!(
            "call with a higher permission level than {} or, where the level allows it, from \
             an MCP client that supports elicitation and allow it when asked",
            self.permission
        );
        let message = question::denial_message(asked, why, &how_to_allow);
        Verdict::Deny { message }
    }
}

/// A tool's input as JSON, cut short.
fn shown_input(input: &Value) -> String {
    let mut shown = input.to_string();
    if shown.chars().count() > INPUT_SHOWN {
        shown = shown.chars().take(INPUT_SHOWN).chain(['…']).collect();
    }
    shown
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
        let mut run = RunRequest::new("fix it", "/srv/project");
        run.permission = permission;
        Approver::for_run(clis::CLAUDE, &run, Asking::nobody(how, None)).expect("below unlimited")
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

    #[tokio::test]
    async fn each_question_and_its_answer_is_recorded_in_the_jobs_transcript() {
        use crate::jobs::store::{JobId, JobStatus, NewJob, Origin, Store};
        let temp = cli_agent_test_support::common::temp_dir("approve");
        let dir = temp.path();
        let store = Store::open(dir).unwrap();
        let id = JobId::random();
        let job = NewJob {
            id: &id,
            agent: clis::CLAUDE,
            origin: Origin::Call,
            workspace: dir,
            permission: Permission::ReadOnly,
            model: None,
            session_id: None,
            prompt: "fix it",
            status: JobStatus::Running,
            allowed_past: None,
        };
        store.insert(&job).unwrap();
        let mut run = RunRequest::new("fix it", dir);
        run.permission = Permission::ReadOnly;
        let approver = Approver::for_run(
            clis::CLAUDE,
            &run,
            Asking::nobody(ASK, Some(store.recorder(&id))),
        )
        .unwrap();
        approver
            .verdict(question("Write", json!({"file_path": "a"})))
            .await;
        approver
            .verdict(question("Bash", json!({"command": "ls"})))
            .await;
        store.recorder(&id).flush();
        let page = store.transcript_page(&id, 0, 10).unwrap().expect("a page");
        let events: Vec<Value> = page
            .text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(
            events,
            [
                json!({"type": "question", "about": "tool_permission", "tool": "Write",
                    "input": r#"{"file_path":"a"}"#, "answer": "denied_without_asking",
                    "answered_by": null, "why": "a read-only call edits no files"}),
                json!({"type": "question", "about": "tool_permission", "tool": "Bash",
                    "input": r#"{"command":"ls"}"#, "answer": "nobody_to_ask",
                    "answered_by": null,
                    "why": "the call's client is gone, so nobody can be asked"}),
            ]
        );
    }

    #[test]
    fn nothing_asks_at_unlimited() {
        let mut run = RunRequest::new("fix it", "/srv/project");
        run.permission = Permission::Unlimited;
        assert!(Approver::for_run(clis::CLAUDE, &run, Asking::nobody(ASK, None)).is_none());
    }
}
