//! How the person is reached through the client that made a request, by the protocol it
//! speaks: a 2025-11-25 session takes an `elicitation/create` request; a client on 2026-07-28
//! takes no request from a server, so a question waits on the [`Board`] for the client's next
//! request about the job to carry it out.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientCapabilities, ProtocolVersion};
use rmcp::service::{ElicitationMode, Peer, RequestContext, ServiceError};

use super::board::Board;
use super::{NoLeave, form};
use crate::jobs::store::JobId;

/// The client a question goes to.
#[derive(Clone)]
pub enum Client {
    /// A 2025-11-25 session: asked with a request on it, while it lasts.
    Session(Peer<RoleServer>),
    /// A client on 2026-07-28, by the name it gave: asked through its requests.
    Requests { board: Arc<Board>, name: String },
}

impl Client {
    /// The client of `context`'s request; a 2026-07-28 client that declared no form
    /// elicitation cannot be asked.
    pub fn of(context: &RequestContext<RoleServer>, board: &Arc<Board>) -> Result<Self, NoLeave> {
        let modern = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        if !modern {
            return Ok(Self::Session(context.peer.clone()));
        }
        if !asks_forms(context.client_capabilities().as_ref()) {
            return Err(NoLeave::CannotAsk);
        }
        let name = context
            .client_info()
            .map_or_else(|| UNNAMED.to_owned(), |info| info.name);
        Ok(Self::Requests {
            board: board.clone(),
            name,
        })
    }

    /// The client's name, as the person knows it.
    pub fn name(&self) -> String {
        match self {
            Self::Session(peer) => session_name(peer),
            Self::Requests { name, .. } => name.clone(),
        }
    }

    /// Ask `question` about `job`, waiting up to `timeout` for the answer.
    pub async fn ask(
        &self,
        job: &JobId,
        question: String,
        timeout: Duration,
    ) -> Result<(), NoLeave> {
        match self {
            Self::Session(peer) => {
                // rmcp takes the protocol of the request being handled from the task it runs
                // in: asked from another request's handler (a delegate's question arrives in
                // its endpoint's, on 2026-07-28 with claude 2.1.332), the session's request
                // would be refused. A task of its own asks as the session's protocol says.
                let (peer, job) = (peer.clone(), job.clone());
                let asked = tokio::spawn(async move {
                    tracing::debug!(%job, "asking the person through the session");
                    elicit(&peer, question, timeout).await
                });
                asked
                    .await
                    .unwrap_or_else(|error| Err(NoLeave::Failed(error.to_string())))
            }
            Self::Requests { board, .. } => {
                let mut posted = board.post(job, form::form(question)?);
                match tokio::time::timeout(timeout, posted.answer()).await {
                    Ok(answer) => form::read_response(answer),
                    Err(_) => Err(NoLeave::NoAnswer(timeout)),
                }
            }
        }
    }
}

/// How a client that gave no name is called.
const UNNAMED: &str = "the MCP client";

/// A session's client, by the name it gave when it connected.
pub fn session_name(peer: &Peer<RoleServer>) -> String {
    peer.peer_info()
        .map_or_else(|| UNNAMED.to_owned(), |info| info.client_info.name.clone())
}

/// Ask `question` in an `elicitation/create` request on a 2025-11-25 session, waiting up to
/// `timeout`: `Ok` only for an accept with `allow` ticked.
pub async fn elicit(
    peer: &Peer<RoleServer>,
    question: String,
    timeout: Duration,
) -> Result<(), NoLeave> {
    if !peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
    {
        return Err(NoLeave::CannotAsk);
    }
    tracing::info!(client = %session_name(peer), "asking the person with an elicitation request");
    let asked = peer
        .create_elicitation_with_timeout(form::form(question)?, Some(timeout))
        .await;
    match asked {
        Ok(answer) => form::read(answer),
        Err(ServiceError::Timeout { timeout }) => Err(NoLeave::NoAnswer(timeout)),
        Err(other) => Err(NoLeave::Failed(other.to_string())),
    }
}

/// Whether a 2026-07-28 request's client declared form elicitation (a declaration naming
/// neither mode means forms, as in 2025-11-25).
fn asks_forms(capabilities: Option<&ClientCapabilities>) -> bool {
    let Some(elicitation) = capabilities.and_then(|c| c.elicitation.as_ref()) else {
        return false;
    };
    elicitation.form.is_some() || elicitation.url.is_none()
}
