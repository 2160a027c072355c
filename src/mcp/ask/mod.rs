//! Ask the person, not the model. A call past a bound the person may lift (see
//! [`Refusal::person_may_allow`](super::policy::Refusal::person_may_allow)) runs only if they
//! allow it, and a delegate's own permission question (see `delegate_questions`) is put to
//! them, in one form ([`form`]): the question and an `allow` checkbox.
//!
//! How the form reaches them depends on the client's protocol ([`Client`]): a 2025-11-25
//! session gets an `elicitation/create` request; a client on 2026-07-28 takes no request from
//! a server, so the question goes out as an input request of an `InputRequiredResult` (MRTR)
//! and the answer comes back with the client's retry, under a sealed, single-use
//! `requestState` ([`RequestStates`]); a delegate's question waits on the [`Board`] for the
//! client's next request about its job. Anything but an accept with `allow` ticked leaves the
//! refusal (or the denial) as it was.

mod board;
mod bounds;
mod client;
mod form;
mod request_state;

use std::time::Duration;

use cli_agent_engine::PersonAnswer;

pub use self::board::Board;
pub use self::bounds::{allowed_past, allowed_past_question, ask_first, question};
pub use self::client::{Client, elicit, session_name};
pub use self::form::{form, read_response};
pub use self::request_state::{Binding, RequestStates, StateRefused};

/// What the server does with a call past a bound the person may lift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeyondBounds {
    /// Ask the person through the client; no answer within `timeout` refuses.
    Ask { timeout: Duration },
    /// Refuse without asking.
    Refuse,
}

/// Why the person gave no leave.
#[derive(Debug, thiserror::Error)]
pub enum NoLeave {
    #[error("the person declined")]
    Declined,
    #[error("the person cancelled the question")]
    Cancelled,
    #[error("the person did not tick `allow`")]
    NotTicked,
    #[error("the client cannot ask the person (no elicitation capability)")]
    CannotAsk,
    #[error("the person did not answer within {0:?}")]
    NoAnswer(Duration),
    #[error("asking the person failed: {0}")]
    Failed(String),
    #[error("this server never asks the person (--ask-beyond-bounds refuse)")]
    NeverAsked,
    #[error("the call's client is gone, so nobody can be asked")]
    ClientGone,
}

impl NoLeave {
    /// The answer, as the job's transcript records it.
    pub fn answer(&self) -> PersonAnswer {
        match self {
            Self::Declined | Self::NotTicked => PersonAnswer::Declined,
            Self::Cancelled => PersonAnswer::Cancelled,
            Self::NoAnswer(_) => PersonAnswer::TimedOut,
            Self::CannotAsk | Self::Failed(_) | Self::ClientGone => PersonAnswer::NobodyToAsk,
            Self::NeverAsked => PersonAnswer::DeniedWithoutAsking,
        }
    }

    /// Whether the person could not be asked through the client (or did not answer), so
    /// that the question may wait for them on the dashboard (`--park-questions`).
    pub fn may_park(&self) -> bool {
        matches!(
            self.answer(),
            PersonAnswer::NobodyToAsk | PersonAnswer::TimedOut
        )
    }

    /// Whether the person gave this answer (rather than nobody).
    pub fn by_the_person(&self) -> bool {
        matches!(self, Self::Declined | Self::NotTicked | Self::Cancelled)
    }
}
