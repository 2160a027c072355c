//! Starting a call's job: its question endpoint for the CLI's permission questions, then the
//! run submitted to the jobs ([`Jobs::submit`]). A [`Launcher`] is cheap to clone, so a task that outlives the call (a
//! question that lapsed and is parked for the dashboard) can start the job too.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::CallToolResult;

use super::ask::{self, BeyondBounds, Client, NoLeave};
use super::delegate_questions::{Asking, Endpoint, QuestionsJob};
use super::policy::Refusal;
use super::result;
use super::tools::CallRequest;
use crate::jobs::store::{JobId, Origin};
use crate::jobs::{AskFirst, Job, JobOptions, Jobs, Submission};

/// What starting a job needs of the server.
#[derive(Clone)]
pub struct Launcher {
    pub jobs: Arc<Jobs>,
    pub beyond_bounds: BeyondBounds,
    /// Whether a question nobody can be asked through the client waits for the person on
    /// the dashboard (`--park-questions`).
    pub park_questions: bool,
}

/// How a call past the server's bounds got past them, if it did.
pub enum Leave {
    /// Within the bounds: nobody was asked.
    Within,
    /// The person allowed it through the client of this name.
    Allowed(String),
    /// Nobody could be asked through the client: the job asks on the dashboard first.
    AskFirst(AskFirst),
}

impl Launcher {
    /// Prepare and start `call`'s job, let past its bounds by `leave`. The CLI's own
    /// permission questions, if it can forward them, go to `client` while the job runs. A
    /// call that can't start gets its refusal as its result.
    pub async fn start_job(
        &self,
        mut call: CallRequest,
        leave: Leave,
        origin: Origin,
        client: Result<Client, NoLeave>,
    ) -> Result<Arc<Job>, CallToolResult> {
        let agent = call.agent;
        let id = JobId::random();
        let asking = self.asking(&id, client, &call);
        let questions = Endpoint::open(agent, &call.run, asking).await;
        call.run.questions = questions.as_ref().map(Endpoint::address);
        let submission = Submission {
            agent,
            run: call.run,
            origin,
            options: job_options(call.save_to, &call.beyond_bounds, leave),
        };
        let job = self
            .jobs
            .submit(id, submission)
            .await
            .map_err(|refused| result::refused(agent, &refused))?;
        if let Some(endpoint) = questions {
            let finished = job.clone();
            tokio::spawn(async move {
                finished.finished().await;
                endpoint.close().await;
            });
        }
        Ok(job)
    }

    /// Who answers the permission questions of job `id`'s run: the person through `client`,
    /// or the dashboard; recorded in the job's transcript.
    fn asking(&self, id: &JobId, client: Result<Client, NoLeave>, call: &CallRequest) -> Asking {
        Asking {
            client,
            how: self.beyond_bounds,
            transcript: self.jobs.transcript(id),
            job: Some(QuestionsJob {
                jobs: self.jobs.clone(),
                id: id.clone(),
                park: self.park_questions,
            }),
            wait: call.run.person_wait.clone(),
        }
    }
}

/// A call's job options: ask on the dashboard before it starts, or record the bounds the
/// person already let it past.
fn job_options(save_to: Option<PathBuf>, beyond_bounds: &[Refusal], leave: Leave) -> JobOptions {
    match leave {
        Leave::Within => JobOptions {
            save_to,
            ..JobOptions::default()
        },
        Leave::AskFirst(ask) => JobOptions {
            save_to,
            ask_first: Some(ask),
            ..JobOptions::default()
        },
        Leave::Allowed(client) => JobOptions {
            save_to,
            allowed_past: ask::allowed_past(beyond_bounds),
            asked_before: Vec::from_iter(ask::allowed_past_question(beyond_bounds, client)),
            ..JobOptions::default()
        },
    }
}
