//! Ask the person, not the model: a call past a bound the person may lift (see
//! [`Refusal::person_may_allow`]) runs only if they allow it in an MCP elicitation form. Anything
//! else (a decline, a cancel, no answer in time, an answer without `allow: true`, a client that
//! cannot be asked, a session whose protocol forbids server requests) leaves the refusal as it was.

use std::time::Duration;

use cli_agent_engine::{Agent, PersonAnswer, PersonQuestion, QuestionAbout, RunRequest};
use rmcp::RoleServer;
use rmcp::service::{ElicitationError, Peer, ServiceError};
use schemars::JsonSchema;
use serde::Deserialize;

use super::policy::Refusal;
use crate::jobs::AskFirst;

/// The most characters of the prompt's first line the question quotes.
const PROMPT_SHOWN: usize = 200;

/// The form the person fills: one checkbox.
#[derive(Debug, Deserialize, JsonSchema)]
struct Permit {
    /// Allow what the question above describes (leave it unticked, or decline, to refuse).
    allow: bool,
}

rmcp::elicit_safe!(Permit);

/// What the server does with a call past a bound the person may lift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeyondBounds {
    /// Ask the person through the client; no answer within `timeout` refuses.
    Ask { timeout: Duration },
    /// Refuse without asking.
    Refuse,
}

impl BeyondBounds {
    /// Whether the person allowed `agent`'s `run`, which goes past `bounds`: `Ok` if they did.
    pub async fn ask(
        self,
        peer: &Peer<RoleServer>,
        agent: Agent,
        run: &RunRequest,
        bounds: &[Refusal],
    ) -> Result<(), NoLeave> {
        let Self::Ask { timeout } = self else {
            return Err(NoLeave::NeverAsked);
        };
        let answer = ask_person(peer, question(agent, run, bounds), timeout).await;
        match &answer {
            Ok(()) => tracing::info!(%agent, "the person allowed a call past the server's bounds"),
            Err(no_leave) => {
                tracing::info!(%agent, "no leave to go past the server's bounds: {no_leave}");
            }
        }
        answer
    }
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
}

impl NoLeave {
    /// The answer, as the job's transcript records it.
    pub fn answer(&self) -> PersonAnswer {
        match self {
            Self::Declined | Self::NotTicked => PersonAnswer::Declined,
            Self::Cancelled => PersonAnswer::Cancelled,
            Self::NoAnswer(_) => PersonAnswer::TimedOut,
            Self::CannotAsk | Self::Failed(_) => PersonAnswer::NobodyToAsk,
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

/// The client the person answers through, by the name it gave.
pub fn client_name(peer: &Peer<RoleServer>) -> String {
    peer.peer_info().map_or_else(
        || "the MCP client".to_owned(),
        |info| info.client_info.name.clone(),
    )
}

/// Ask the person `question` in a form with one `allow` checkbox, waiting up to `timeout`:
/// `Ok` only for an accept with `allow` ticked.
pub async fn ask_person(
    peer: &Peer<RoleServer>,
    question: String,
    timeout: Duration,
) -> Result<(), NoLeave> {
    let answer = peer
        .elicit_with_timeout::<Permit>(question, Some(timeout))
        .await;
    match answer {
        Ok(Some(Permit { allow: true })) => Ok(()),
        Ok(_) => Err(NoLeave::NotTicked),
        Err(ElicitationError::UserDeclined) => Err(NoLeave::Declined),
        Err(ElicitationError::UserCancelled) => Err(NoLeave::Cancelled),
        Err(ElicitationError::CapabilityNotSupported) => Err(NoLeave::CannotAsk),
        Err(ElicitationError::Service(ServiceError::Timeout { timeout })) => {
            Err(NoLeave::NoAnswer(timeout))
        }
        Err(other) => Err(NoLeave::Failed(other.to_string())),
    }
}

/// What a call the person allowed went past, for its job's record; `None` within the bounds.
pub fn allowed_past(bounds: &[Refusal]) -> Option<String> {
    let words: Vec<_> = bounds.iter().map(Refusal::for_the_person).collect();
    (!words.is_empty()).then(|| words.join("; "))
}

/// The transcript's record that the person let a call past `bounds` through `client`, for its
/// job (asked before the job existed).
pub fn allowed_past_question(bounds: &[Refusal], client: String) -> Option<PersonQuestion> {
    Some(PersonQuestion {
        about: QuestionAbout::ServerBounds {
            bounds: allowed_past(bounds)?,
        },
        answer: PersonAnswer::Allowed,
        answered_by: Some(client),
        why: None,
    })
}

/// What `agent`'s job of `run`, past `bounds`, asks the person on the dashboard before it starts,
/// since `no_leave` came of asking through the client; `None` within the bounds.
pub fn ask_first(
    agent: Agent,
    run: &RunRequest,
    bounds: &[Refusal],
    no_leave: &NoLeave,
) -> Option<AskFirst> {
    let refusal = bounds.first()?.to_string();
    let past = allowed_past(bounds)?;
    let question = format!(
        "{} call past the server's bounds: {past}\n{}\n(Not asked through the client: \
         {no_leave}.)",
        agent,
        question(agent, run, bounds)
    );
    Some(AskFirst {
        question,
        bounds: past,
        refusal,
    })
}

/// The question: who asks what, past which bounds.
fn question(agent: Agent, run: &RunRequest, bounds: &[Refusal]) -> String {
    let first_line: String = run
        .prompt
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
        .chars()
        .take(PROMPT_SHOWN)
        .collect();
    let mut text =
        format!("An MCP call asks the {agent} agent for more than this server allows:\n");
    for bound in bounds {
        text.push_str(&format!("- {}\n", bound.for_the_person()));
    }
    text.push_str(&format!(
        "Workspace: {}\nPermission: {}\nPrompt: {first_line}\n\nAllow this one call?",
        run.workspace.display(),
        run.permission
    ));
    text
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use cli_agent_engine::{Permission, clis};

    use super::*;

    #[test]
    fn the_question_names_agent_bounds_workspace_level_and_the_prompts_first_line() {
        let mut run = RunRequest::new(
            "\nfix the build\nthen more",
            PathBuf::from("/srv/elsewhere"),
        );
        run.permission = Permission::Unlimited;
        let bounds = [Refusal::AboveCeiling {
            asked: Permission::Unlimited,
            ceiling: Permission::WorkspaceWrite,
        }];
        let text = question(clis::CODEX, &run, &bounds);
        for expected in [
            "codex",
            "permission unlimited, above your ceiling workspace-write",
            "Workspace: /srv/elsewhere",
            "Permission: unlimited",
            "Prompt: fix the build\n",
        ] {
            assert!(text.contains(expected), "{expected:?} in {text}");
        }
        assert!(!text.contains("then more"), "{text}");
    }
}
