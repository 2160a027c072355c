//! A question put to the person (never the model) on a run's behalf, and its answer: the
//! engine only carries it in the event stream; whoever asks (the MCP server, by elicitation)
//! records it in the run's transcript.

use serde::Serialize;

/// One question and its answer, as a transcript event.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PersonQuestion {
    #[serde(flatten)]
    pub about: QuestionAbout,
    pub answer: PersonAnswer,
    /// The client through which the person answered; `None` when nobody did (the server
    /// answered itself: denied without asking, nobody to ask, no answer in time).
    pub answered_by: Option<String>,
    /// Why the server answered as it did, when it answered itself or asking failed.
    pub why: Option<String>,
}

/// What the person was asked about.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "about", rename_all = "snake_case")]
pub enum QuestionAbout {
    /// The agent asked to use a tool its call's permission level does not give it.
    ToolPermission {
        tool: String,
        /// The tool's input, cut short.
        input: String,
    },
    /// The call went past the server's bounds, in the words the person was asked in.
    ServerBounds { bounds: String },
}

/// How the question was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PersonAnswer {
    Allowed,
    Declined,
    Cancelled,
    TimedOut,
    /// What the call's level or the server forbids outright: nobody was asked.
    DeniedWithoutAsking,
    /// No client could put the question to the person.
    NobodyToAsk,
}

impl PersonAnswer {
    /// As the transcript and status lines say it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Declined => "declined",
            Self::Cancelled => "cancelled",
            Self::TimedOut => "timed out",
            Self::DeniedWithoutAsking => "denied without asking",
            Self::NobodyToAsk => "nobody to ask",
        }
    }
}
