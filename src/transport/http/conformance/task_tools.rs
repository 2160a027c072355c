//! The tools of the tasks extension's scenarios (SEP-2663, `io.modelcontextprotocol/tasks`):
//! `greet` (never a task), `slow_compute` (a task when the request declares the extension, else
//! answered in the call), and `failing_job`, `protocol_error_job`, `confirm_delete`,
//! `multi_input` and `test_tool_with_task`, which need a task: from a request without the
//! extension they are refused with -32021 naming it. Their tasks live in `task_table`.
//!
//! `test_tool_with_task` first asks for the user's name through the result (SEP-2322), then
//! answers with a task whose result greets that name: the two surfaces composed.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
    CreateTaskResult, InputRequests, JsonObject, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::Fixtures;
use super::asking::USER_NAME;
use super::input_required::{Ask, Field, Gathered, Input, Reply, Rounds, input_requests};
use super::input_schema;
use super::task_table::TaskInput;

/// How long `failing_job` works before it fails: long enough to be seen working.
const FAILING_AFTER: Duration = Duration::from_secs(1);

const CONFIRM_DELETE: Input = Input {
    key: "confirm",
    ask: Ask::Form {
        message: "Delete the file?",
        field: "confirm",
        kind: Field::Flag,
    },
};
/// `multi_input`'s other question: the name again, under a key of its own.
const NAME: Input = Input {
    key: "name",
    ..USER_NAME
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskFixture {
    Greet,
    SlowCompute,
    FailingJob,
    ProtocolErrorJob,
    ConfirmDelete,
    MultiInput,
    WithTask,
}

#[derive(Default, Deserialize)]
struct Greeting {
    name: Option<String>,
}

#[derive(Default, Deserialize)]
struct Computing {
    #[serde(default)]
    seconds: u64,
    #[serde(default)]
    label: String,
}

#[derive(Default, Deserialize)]
struct Deleting {
    #[serde(default)]
    filename: String,
}

/// A fixture's work, its arguments read and its questions made: what its task runs.
enum Work {
    Compute(Computing),
    Fail,
    ProtocolError,
    ConfirmDelete(Deleting, InputRequests),
    MultiInput(InputRequests),
    Greet(Greeting),
}

impl TaskFixture {
    const ALL: [Self; 7] = [
        Self::Greet,
        Self::SlowCompute,
        Self::FailingJob,
        Self::ProtocolErrorJob,
        Self::ConfirmDelete,
        Self::MultiInput,
        Self::WithTask,
    ];

    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|fixture| fixture.name() == name)
    }

    fn name(self) -> &'static str {
        match self {
            Self::Greet => "greet",
            Self::SlowCompute => "slow_compute",
            Self::FailingJob => "failing_job",
            Self::ProtocolErrorJob => "protocol_error_job",
            Self::ConfirmDelete => "confirm_delete",
            Self::MultiInput => "multi_input",
            Self::WithTask => "test_tool_with_task",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Self::Greet => "Conformance fixture: says hello to `name`, never as a task",
            Self::SlowCompute => {
                "Conformance fixture: works `seconds` seconds, as a task if the request declares tasks"
            }
            Self::FailingJob => "Conformance fixture (task required): a tool error after a second",
            Self::ProtocolErrorJob => {
                "Conformance fixture (task required): fails with a JSON-RPC error"
            }
            Self::ConfirmDelete => {
                "Conformance fixture (task required): asks before it deletes `filename`"
            }
            Self::MultiInput => "Conformance fixture (task required): asks two questions at once",
            Self::WithTask => {
                "Conformance fixture (task required): asks your name in the result, then greets you in a task"
            }
        }
    }

    fn properties(self) -> serde_json::Value {
        match self {
            Self::Greet => serde_json::json!({"name": {"type": "string"}}),
            Self::SlowCompute => serde_json::json!({
                "seconds": {"type": "integer", "minimum": 0},
                "label": {"type": "string"},
            }),
            Self::ConfirmDelete => serde_json::json!({"filename": {"type": "string"}}),
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

    /// `greet` answers in the call; `slow_compute` too when the request did not declare the
    /// tasks extension; the others need it, and answer with a task.
    pub async fn call(
        self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        fixtures: &Fixtures,
    ) -> Result<CallToolResponse, ErrorData> {
        let tasks = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        let arguments = request.arguments.as_ref();
        match self {
            Self::Greet => return Ok(hello(self.read(arguments)?).into()),
            Self::SlowCompute if !tasks => return Ok(compute(self.read(arguments)?).await.into()),
            _ if !tasks => {
                return Err(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ));
            }
            _ => {}
        }
        let work = match self.work(request, context, fixtures)? {
            Ok(work) => work,
            Err(asking) => return Ok(asking),
        };
        let task = fixtures.tasks.start(|input| work.run(input));
        Ok(CreateTaskResult::new(task).into())
    }

    /// `test_tool_with_task`'s first round: the user's name, or the result asking for it.
    fn gather(
        self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        fixtures: &Fixtures,
    ) -> Result<Result<String, CallToolResponse>, ErrorData> {
        let rounds = Rounds {
            owner: self.name(),
            rounds: vec![vec![USER_NAME]],
            sealed: false,
        };
        let gathered = rounds.gather(Reply::to_call(request), context, &fixtures.sealer)?;
        Ok(match gathered {
            Gathered::Answers(mut answers) => Ok(answers.remove(USER_NAME.key).unwrap_or_default()),
            Gathered::Asking(asking) => Err(asking.into()),
        })
    }

    /// The work a call's task runs, its arguments read and its questions made; or, for
    /// `test_tool_with_task` until it has the user's name, the result asking for it.
    fn work(
        self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        fixtures: &Fixtures,
    ) -> Result<Result<Work, CallToolResponse>, ErrorData> {
        let capabilities = context.client_capabilities();
        let arguments = request.arguments.as_ref();
        Ok(Ok(match self {
            Self::Greet => Work::Greet(self.read(arguments)?),
            Self::SlowCompute => Work::Compute(self.read(arguments)?),
            Self::FailingJob => Work::Fail,
            Self::ProtocolErrorJob => Work::ProtocolError,
            Self::ConfirmDelete => Work::ConfirmDelete(
                self.read(arguments)?,
                input_requests(&[CONFIRM_DELETE], capabilities.as_ref())?,
            ),
            Self::MultiInput => Work::MultiInput(input_requests(
                &[NAME, CONFIRM_DELETE],
                capabilities.as_ref(),
            )?),
            Self::WithTask => match self.gather(request, context, fixtures)? {
                Ok(name) => Work::Greet(Greeting { name: Some(name) }),
                Err(asking) => return Ok(Err(asking)),
            },
        }))
    }

    /// The call's arguments as `T`; none are its defaults.
    fn read<T: DeserializeOwned + Default>(
        self,
        arguments: Option<&JsonObject>,
    ) -> Result<T, ErrorData> {
        let Some(arguments) = arguments else {
            return Ok(T::default());
        };
        serde_json::from_value(arguments.clone().into()).map_err(|error| {
            ErrorData::invalid_params(
                format!(
                    "{}'s arguments: {error}; its input schema says what it takes",
                    self.name()
                ),
                None,
            )
        })
    }
}

impl Work {
    /// The work done in a task, which may ask its client through `input`.
    async fn run(self, input: TaskInput) -> Result<CallToolResult, ErrorData> {
        match self {
            Self::Greet(greeting) => Ok(hello(greeting)),
            Self::Compute(computing) => Ok(compute(computing).await),
            Self::Fail => {
                tokio::time::sleep(FAILING_AFTER).await;
                Ok(CallToolResult::error(vec![ContentBlock::text(
                    "failing_job failed, as it always does",
                )]))
            }
            Self::ProtocolError => Err(ErrorData::internal_error(
                "protocol_error_job failed with a JSON-RPC error, as it always does",
                None,
            )),
            Self::ConfirmDelete(deleting, questions) => {
                let answers = input.ask(questions).await;
                let confirmed = answers
                    .get(CONFIRM_DELETE.key)
                    .and_then(|answer| CONFIRM_DELETE.read(answer));
                Ok(text(match confirmed.as_deref() {
                    Some("true") => {
                        format!("Deleted {} (not really: a fixture)", deleting.filename)
                    }
                    _ => format!("Kept {}", deleting.filename),
                }))
            }
            Self::MultiInput(questions) => {
                let answers = input.ask(questions).await;
                let read = |question: Input| {
                    answers
                        .get(question.key)
                        .and_then(|answer| question.read(answer))
                        .unwrap_or_default()
                };
                Ok(text(format!(
                    "Both answered: name {}, confirmed {}",
                    read(NAME),
                    read(CONFIRM_DELETE)
                )))
            }
        }
    }
}

fn hello(greeting: Greeting) -> CallToolResult {
    text(format!(
        "Hello, {}!",
        greeting.name.as_deref().unwrap_or("World")
    ))
}

async fn compute(computing: Computing) -> CallToolResult {
    tokio::time::sleep(Duration::from_secs(computing.seconds)).await;
    text(format!(
        "Computed {} in {} s",
        computing.label, computing.seconds
    ))
}

fn text(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}
