//! The ledger of the sessions an engine has seen: where each started, since most CLIs resume a
//! session only from there, and the last usage a CLI reported for it where the CLI sums usage
//! over a whole session, so that a resumed run reports its own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::agent::Agent;
use crate::error::SetupError;
use crate::event::Usage;
use crate::outcome::Outcome;
use crate::request::RunRequest;
use crate::transcript::Transcript;

/// Every session of the engine's runs, by agent and session id. Shared by concurrent runs.
#[derive(Debug, Default)]
pub(crate) struct Sessions(Mutex<HashMap<(Agent, String), SessionRecord>>);

/// What the ledger knows of one session.
#[derive(Clone, Debug)]
pub(super) struct SessionRecord {
    workspace: PathBuf,
    /// The last cumulative usage report (see [`crate::cli::Cli::usage_is_cumulative`]), to
    /// subtract next time.
    cumulative_usage: Option<Usage>,
}

impl Sessions {
    /// What the ledger knows of the session `request` resumes, if any. Most CLIs resume a
    /// session only from the directory it started in (opencode hangs otherwise): such a
    /// resume from another directory is refused here, naming the original.
    pub(super) fn check_resume(
        &self,
        agent: Agent,
        request: &RunRequest,
    ) -> Result<Option<SessionRecord>, SetupError> {
        let Some(session_id) = &request.session_id else {
            return Ok(None);
        };
        let record = self.ledger().get(&(agent, session_id.clone())).cloned();
        let Some(record) = record else {
            return Ok(None);
        };
        if agent.cli().resumes_only_from_origin() && record.workspace != request.workspace {
            return Err(SetupError::ResumeFromOtherWorkspace {
                agent: agent.name(),
                session_id: session_id.clone(),
                original: record.workspace,
            });
        }
        Ok(Some(record))
    }

    /// Records the session a run ended in, started in `workspace`, with the usage its CLI
    /// `reported` (before it was turned into this run's own).
    pub(super) fn remember(
        &self,
        agent: Agent,
        workspace: &Path,
        outcome: &Outcome,
        reported: Option<Usage>,
    ) {
        let Some(session_id) = &outcome.session_id else {
            return;
        };
        let mut ledger = self.ledger();
        let record = ledger
            .entry((agent, session_id.clone()))
            .or_insert_with(|| SessionRecord {
                workspace: workspace.to_owned(),
                cumulative_usage: None,
            });
        if reported.is_some() {
            record.cumulative_usage = reported;
        }
    }

    fn ledger(&self) -> MutexGuard<'_, HashMap<(Agent, String), SessionRecord>> {
        // A panic while it was held left at worst one session unrecorded: keep going.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Turns the usage a CLI reports summed over its session into this run's: the session's last
/// report, from `earlier`, is subtracted. A resumed session whose earlier turns this engine
/// did not see keeps the sum, with a warning that says so.
pub(super) fn this_runs_usage(
    transcript: &mut Transcript,
    agent: Agent,
    request: &RunRequest,
    earlier: Option<SessionRecord>,
) {
    let earlier = earlier.and_then(|record| record.cumulative_usage);
    match (earlier, transcript.usage_mut()) {
        (Some(earlier), Some(usage)) => *usage = usage.since(&earlier),
        (None, Some(_)) if request.session_id.is_some() => transcript.warn(format!(
            "{agent} reports usage cumulatively over a session, and this server did not see the \
             session's earlier turns: the usage includes them"
        )),
        _ => {}
    }
}
