//! Asking the client through the result (SEP-2322, multi round-trip requests): a fixture
//! answers an `InputRequiredResult` naming what it needs, and the client calls again with the
//! answers in `inputResponses` (and the `requestState` it was given). This is the engine the
//! fixtures share: what an input is, how it is asked and read back, and the rounds.
//!
//! A missing, unknown or malformed answer is asked again with a new `InputRequiredResult`
//! (extra keys are ignored); an input whose capability the request did not declare is not
//! asked at all but refused with -32021 (SEP-2575), naming the capability. A fixture with
//! several rounds keeps its place and the answers so far in a sealed `requestState`, and reads
//! answers only with a state it sealed: a tampered one is -32602.

use std::collections::BTreeMap;

#[allow(deprecated)]
// roots and sampling: SEP-2577 deprecates them, the MRTR scenarios ask for them
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    GetPromptRequestParams, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ListRootsRequest, RootsCapabilities, SamplingCapability, SamplingMessage,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::sealed::Sealer;

/// One thing a fixture asks the client for, under `key` in `inputRequests`.
#[derive(Clone, Copy, Debug)]
pub struct Input {
    pub key: &'static str,
    pub ask: Ask,
}

#[derive(Clone, Copy, Debug)]
pub enum Ask {
    /// `elicitation/create`: a form of one required field.
    Form {
        message: &'static str,
        field: &'static str,
        kind: Field,
    },
    /// `sampling/createMessage`: one user message.
    Sample {
        prompt: &'static str,
        max_tokens: u32,
    },
    /// `roots/list`.
    Roots,
}

#[derive(Clone, Copy, Debug)]
pub enum Field {
    Text,
    Flag,
}

/// The answers so far, by input key: the text each answer came down to.
pub type Answers = BTreeMap<String, String>;

/// A client capability an input needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Capability {
    Elicitation,
    Sampling,
    Roots,
}

impl Ask {
    fn needs(self) -> Capability {
        match self {
            Self::Form { .. } => Capability::Elicitation,
            Self::Sample { .. } => Capability::Sampling,
            Self::Roots => Capability::Roots,
        }
    }

    /// Whether `capabilities` (the request's) let this be asked.
    pub fn declared(self, capabilities: Option<&ClientCapabilities>) -> bool {
        capabilities.is_some_and(|declared| match self.needs() {
            Capability::Elicitation => declared.elicitation.is_some(),
            Capability::Sampling => declared.sampling.is_some(),
            Capability::Roots => declared.roots.is_some(),
        })
    }
}

impl Input {
    #[allow(deprecated)] // roots and sampling: see the imports
    pub fn request(self) -> Result<InputRequest, ErrorData> {
        Ok(match self.ask {
            Ask::Form {
                message,
                field,
                kind,
            } => {
                let schema = ElicitationSchema::builder();
                let schema = match kind {
                    Field::Text => schema.required_string(field),
                    Field::Flag => schema.required_bool(field),
                };
                let requested_schema = schema.build().map_err(|error| {
                    ErrorData::internal_error(format!("{}'s form: {error}", self.key), None)
                })?;
                InputRequest::Elicitation(ElicitRequest::new(
                    ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: message.to_owned(),
                        requested_schema,
                    },
                ))
            }
            Ask::Sample { prompt, max_tokens } => {
                let message = SamplingMessage::user_text(prompt);
                InputRequest::CreateMessage(CreateMessageRequest::new(
                    CreateMessageRequestParams::new(vec![message], max_tokens),
                ))
            }
            Ask::Roots => InputRequest::ListRoots(ListRootsRequest::default()),
        })
    }

    /// What the client's `response` came down to, or `None` if it is no answer to this input.
    pub fn read(self, response: &Value) -> Option<String> {
        match self.ask {
            Ask::Form { field, kind, .. } => read_form(response, field, kind),
            Ask::Sample { .. } => Sampled::deserialize(response)
                .ok()
                .map(|sampled| sampled.content.text),
            Ask::Roots => Roots::deserialize(response).ok().map(|listed| {
                let uris: Vec<String> = listed.roots.into_iter().map(|root| root.uri).collect();
                uris.join(", ")
            }),
        }
    }
}

fn read_form(response: &Value, field: &str, kind: Field) -> Option<String> {
    let answer = ElicitResult::deserialize(response).ok()?;
    match answer.action {
        ElicitationAction::Accept => {
            let value = answer.content?.get(field)?.clone();
            match kind {
                Field::Text => value.as_str().map(str::to_owned),
                Field::Flag => value.as_bool().map(|flag| flag.to_string()),
            }
        }
        ElicitationAction::Decline => Some("declined".to_owned()),
        ElicitationAction::Cancel => Some("cancelled".to_owned()),
        _ => None,
    }
}

/// A `CreateMessageResult` with text content: all a fixture reads of one.
#[derive(Deserialize)]
struct Sampled {
    content: SampledText,
}

#[derive(Deserialize)]
struct SampledText {
    text: String,
}

/// A `ListRootsResult`: the URIs.
#[derive(Deserialize)]
struct Roots {
    roots: Vec<Root>,
}

#[derive(Deserialize)]
struct Root {
    uri: String,
}

/// `inputs` as the `inputRequests` of an `InputRequiredResult`, if the request declared the
/// capabilities they need; otherwise -32021 naming those it did not.
pub fn input_requests(
    inputs: &[Input],
    capabilities: Option<&ClientCapabilities>,
) -> Result<InputRequests, ErrorData> {
    let missing: Vec<Capability> = inputs
        .iter()
        .filter(|input| !input.ask.declared(capabilities))
        .map(|input| input.ask.needs())
        .collect();
    if !missing.is_empty() {
        return Err(ErrorData::missing_required_client_capability(required(
            &missing,
        )));
    }
    inputs
        .iter()
        .map(|input| Ok((input.key.to_owned(), input.request()?)))
        .collect()
}

/// `missing` as the `requiredCapabilities` object of -32021.
#[allow(deprecated)] // roots and sampling: see the imports
fn required(missing: &[Capability]) -> ClientCapabilities {
    let mut required = ClientCapabilities::default();
    for capability in missing {
        match capability {
            Capability::Elicitation => required.elicitation = Some(Default::default()),
            Capability::Sampling => required.sampling = Some(SamplingCapability::default()),
            Capability::Roots => required.roots = Some(RootsCapabilities::default()),
        }
    }
    required
}

/// What a request brought back: its `inputResponses` and `requestState`, if any.
#[derive(Clone, Copy, Default)]
pub struct Reply<'a> {
    responses: Option<&'a InputResponses>,
    state: Option<&'a str>,
}

impl<'a> Reply<'a> {
    pub fn to_call(request: &'a CallToolRequestParams) -> Self {
        Self {
            responses: request.input_responses.as_ref(),
            state: request.request_state.as_deref(),
        }
    }

    pub fn to_prompt(request: &'a GetPromptRequestParams) -> Self {
        Self {
            responses: request.input_responses.as_ref(),
            state: request.request_state.as_deref(),
        }
    }
}

/// A fixture's questions, round by round.
pub struct Rounds {
    /// The fixture's name: its states open for it alone.
    pub owner: &'static str,
    pub rounds: Vec<Vec<Input>>,
    /// Whether it keeps its place in a sealed `requestState` (and reads answers only with it).
    pub sealed: bool,
}

/// Either every answer, or the `InputRequiredResult` asking for the rest.
pub enum Gathered {
    Answers(Answers),
    Asking(InputRequiredResult),
}

/// Where a fixture is: the round it asked last and the answers so far.
#[derive(Default, Serialize, Deserialize)]
struct Progress {
    round: usize,
    answers: Answers,
}

impl Rounds {
    /// The answers once every round's are in; until then the next `InputRequiredResult`.
    pub fn gather(
        &self,
        reply: Reply<'_>,
        context: &RequestContext<RoleServer>,
        sealer: &Sealer,
    ) -> Result<Gathered, ErrorData> {
        let capabilities = context.client_capabilities();
        let (mut progress, answered) = match (self.sealed, reply.state) {
            (true, Some(state)) => (sealer.open::<Progress>(state, self.owner)?, true),
            // A sealed fixture only takes answers to what its state says it asked.
            (true, None) => (Progress::default(), false),
            (false, _) => (Progress::default(), true),
        };
        let Some(round) = self.rounds.get(progress.round) else {
            return Ok(Gathered::Answers(progress.answers));
        };
        if answered {
            progress.read(round, reply.responses);
        }
        let missing: Vec<Input> = round
            .iter()
            .filter(|input| !progress.answers.contains_key(input.key))
            .copied()
            .collect();
        if !missing.is_empty() {
            return self.ask(&missing, &progress, capabilities.as_ref(), sealer);
        }
        progress.round += 1;
        match self.rounds.get(progress.round) {
            Some(next) => self.ask(next, &progress, capabilities.as_ref(), sealer),
            None => Ok(Gathered::Answers(progress.answers)),
        }
    }

    fn ask(
        &self,
        inputs: &[Input],
        progress: &Progress,
        capabilities: Option<&ClientCapabilities>,
        sealer: &Sealer,
    ) -> Result<Gathered, ErrorData> {
        let requests = input_requests(inputs, capabilities)?;
        let state = match self.sealed {
            true => Some(sealer.seal(progress, self.owner)?),
            false => None,
        };
        Ok(Gathered::Asking(InputRequiredResult::new(
            Some(requests),
            state,
        )))
    }
}

impl Progress {
    /// Keep the answers `responses` give to `round`'s inputs; others are ignored.
    fn read(&mut self, round: &[Input], responses: Option<&InputResponses>) {
        let Some(responses) = responses else { return };
        for input in round {
            let answer = responses
                .get(input.key)
                .and_then(|response| input.read(response));
            if let Some(answer) = answer {
                self.answers.insert(input.key.to_owned(), answer);
            }
        }
    }
}
