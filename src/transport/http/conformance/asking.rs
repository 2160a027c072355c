//! The fixtures that ask the client through the result (SEP-2322): the tools and the prompt
//! of the `input-required-result-*` scenarios, and the two diagnostic tools of
//! `server-stateless` (SEP-2575): `test_missing_capability`, which needs sampling and so is
//! refused with -32021 to a request that did not declare it, and `test_streaming_elicitation`,
//! which asks its question in the result, never as a request on the response stream.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Prompt, PromptMessage, Role, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::input_required::{Answers, Ask, Field, Gathered, Input, Reply, Rounds};
use super::input_schema;
use super::sealed::Sealer;

pub const USER_NAME: Input = Input {
    key: "user_name",
    ask: Ask::Form {
        message: "What is your name?",
        field: "name",
        kind: Field::Text,
    },
};
const CAPITAL: Input = Input {
    key: "capital_question",
    ask: Ask::Sample {
        prompt: "What is the capital of France?",
        max_tokens: 100,
    },
};
const GREETING: Input = Input {
    key: "greeting",
    ask: Ask::Sample {
        prompt: "Generate a greeting",
        max_tokens: 50,
    },
};
const CLIENT_ROOTS: Input = Input {
    key: "client_roots",
    ask: Ask::Roots,
};
const CONFIRM: Input = Input {
    key: "confirm",
    ask: Ask::Form {
        message: "Please confirm",
        field: "ok",
        kind: Field::Flag,
    },
};
const STEP_1: Input = Input {
    key: "step1",
    ask: Ask::Form {
        message: "Step 1: What is your name?",
        field: "name",
        kind: Field::Text,
    },
};
const STEP_2: Input = Input {
    key: "step2",
    ask: Ask::Form {
        message: "Step 2: What is your favorite color?",
        field: "color",
        kind: Field::Text,
    },
};
const USER_CONTEXT: Input = Input {
    key: "user_context",
    ask: Ask::Form {
        message: "What context should the prompt use?",
        field: "context",
        kind: Field::Text,
    },
};

pub const PROMPT: &str = "test_input_required_result_prompt";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asking {
    Elicitation,
    Sampling,
    ListRoots,
    RequestState,
    MultipleInputs,
    MultiRound,
    TamperedState,
    Capabilities,
    MissingCapability,
    StreamingElicitation,
}

impl Asking {
    const ALL: [Self; 10] = [
        Self::Elicitation,
        Self::Sampling,
        Self::ListRoots,
        Self::RequestState,
        Self::MultipleInputs,
        Self::MultiRound,
        Self::TamperedState,
        Self::Capabilities,
        Self::MissingCapability,
        Self::StreamingElicitation,
    ];

    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|fixture| fixture.name() == name)
    }

    fn name(self) -> &'static str {
        match self {
            Self::Elicitation => "test_input_required_result_elicitation",
            Self::Sampling => "test_input_required_result_sampling",
            Self::ListRoots => "test_input_required_result_list_roots",
            Self::RequestState => "test_input_required_result_request_state",
            Self::MultipleInputs => "test_input_required_result_multiple_inputs",
            Self::MultiRound => "test_input_required_result_multi_round",
            Self::TamperedState => "test_input_required_result_tampered_state",
            Self::Capabilities => "test_input_required_result_capabilities",
            Self::MissingCapability => "test_missing_capability",
            Self::StreamingElicitation => "test_streaming_elicitation",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Self::Elicitation => "Conformance fixture: asks for your name through the result",
            Self::Sampling => "Conformance fixture: asks your model a question through the result",
            Self::ListRoots => "Conformance fixture: asks for your roots through the result",
            Self::RequestState => {
                "Conformance fixture: asks for a confirmation, keeping its place in a sealed requestState"
            }
            Self::MultipleInputs => {
                "Conformance fixture: asks for a form, a sample and your roots at once"
            }
            Self::MultiRound => {
                "Conformance fixture: asks in two rounds, a sealed requestState between"
            }
            Self::TamperedState => "Conformance fixture: refuses a requestState it did not seal",
            Self::Capabilities => {
                "Conformance fixture: asks only for what the request's client capabilities declare"
            }
            Self::MissingCapability => {
                "Conformance fixture: needs sampling; refused with -32021 unless the request declares it"
            }
            Self::StreamingElicitation => {
                "Conformance fixture: asks for your name in the result, never on the stream"
            }
        }
    }

    /// Every fixture, as listed by `tools/list`.
    pub fn tools() -> impl Iterator<Item = Tool> {
        Self::ALL.into_iter().map(|fixture| {
            Tool::new(
                fixture.name(),
                fixture.description(),
                input_schema(serde_json::json!({})),
            )
        })
    }

    fn rounds(self, capabilities: Option<&ClientCapabilities>) -> Rounds {
        let (rounds, sealed) = match self {
            Self::Elicitation | Self::StreamingElicitation => (vec![vec![USER_NAME]], false),
            Self::Sampling | Self::MissingCapability => (vec![vec![CAPITAL]], false),
            Self::ListRoots => (vec![vec![CLIENT_ROOTS]], false),
            Self::RequestState | Self::TamperedState => (vec![vec![CONFIRM]], true),
            Self::MultipleInputs => (vec![vec![USER_NAME, GREETING, CLIENT_ROOTS]], true),
            Self::MultiRound => (vec![vec![STEP_1], vec![STEP_2]], true),
            Self::Capabilities => {
                let declared = [USER_NAME, CAPITAL, CLIENT_ROOTS]
                    .into_iter()
                    .filter(|input| input.ask.declared(capabilities));
                (vec![declared.collect()], false)
            }
        };
        Rounds {
            owner: self.name(),
            rounds,
            sealed,
        }
    }

    /// The answer once every input is in, from the answers.
    fn answer(self, answers: &Answers) -> String {
        let of = |key: &str| answers.get(key).map_or("", String::as_str);
        match self {
            Self::Elicitation => format!("Hello, {}!", of("user_name")),
            Self::Sampling | Self::MissingCapability => {
                format!("Your model answered: {}", of("capital_question"))
            }
            Self::ListRoots => format!("Your roots: {}", of("client_roots")),
            Self::RequestState | Self::TamperedState => format!(
                "state-ok: the requestState came back as sealed; confirmed: {}",
                of("confirm")
            ),
            Self::MultipleInputs => format!(
                "Hello, {}! Your model's greeting: {}; your roots: {}",
                of("user_name"),
                of("greeting"),
                of("client_roots")
            ),
            Self::MultiRound => format!("{}'s favorite color is {}", of("step1"), of("step2")),
            Self::Capabilities if answers.is_empty() => {
                "Nothing asked: the request declared none of elicitation, sampling and roots".into()
            }
            Self::Capabilities => {
                let each: Vec<String> = answers
                    .iter()
                    .map(|(key, answer)| format!("{key}: {answer}"))
                    .collect();
                format!(
                    "Asked only for what the request declared: {}",
                    each.join("; ")
                )
            }
            Self::StreamingElicitation => format!(
                "Hello, {}! Asked in the result, not by a request on the stream",
                of("user_name")
            ),
        }
    }

    pub fn call(
        self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        sealer: &Sealer,
    ) -> Result<CallToolResponse, ErrorData> {
        let rounds = self.rounds(context.client_capabilities().as_ref());
        let gathered = rounds.gather(Reply::to_call(request), context, sealer)?;
        Ok(match gathered {
            Gathered::Asking(asking) => asking.into(),
            Gathered::Answers(answers) => {
                CallToolResult::success(vec![ContentBlock::text(self.answer(&answers))]).into()
            }
        })
    }
}

/// The prompt that asks for its context through the result, as `prompts/list` lists it.
pub fn prompt() -> Prompt {
    Prompt::new(
        PROMPT,
        Some("Conformance fixture: asks for its context through the result"),
        None,
    )
}

/// `prompts/get` of [`PROMPT`]: its messages once the client gave the context.
pub fn get_prompt(
    request: &GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
    sealer: &Sealer,
) -> Result<GetPromptResponse, ErrorData> {
    let rounds = Rounds {
        owner: PROMPT,
        rounds: vec![vec![USER_CONTEXT]],
        sealed: false,
    };
    let gathered = rounds.gather(Reply::to_prompt(request), context, sealer)?;
    Ok(match gathered {
        Gathered::Asking(asking) => asking.into(),
        Gathered::Answers(answers) => {
            let text = format!(
                "Answer with this context in mind: {}",
                answers.get(USER_CONTEXT.key).map_or("", String::as_str)
            );
            let message = PromptMessage::new(Role::User, ContentBlock::text(text));
            GetPromptResult::new(vec![message]).into()
        }
    })
}
