//! A job waiting on the person (`--park-questions`): a question nobody can be asked through
//! the client is parked in the store, the job `needs_input`, and it waits until the person
//! answers on the dashboard (never the model: no tool answers it) or the job stops. Its run
//! waits on a delegate's question; a call past the server's bounds waits before it starts.

use std::sync::Arc;

use cli_agent_engine::{
    AgentEvent, ErrorInfo, ErrorKind, Outcome, PersonAnswer, PersonQuestion, QuestionAbout, Status,
};

use super::job::{AskFirst, Job};
use super::manager::{Jobs, JobsError, STORE_POLL};
use super::store::{JobId, Store};

/// How the transcript names the dashboard as the way the person answered.
const DASHBOARD: &str = "the dashboard";

/// How a question parked for the person was settled.
#[derive(Debug)]
pub struct Settled {
    pub answer: PersonAnswer,
    /// Why nobody answered (the job stopped first, or the question could not be parked);
    /// `None` when the person answered on the dashboard.
    pub unanswered: Option<String>,
}

impl Settled {
    /// Who answered: the dashboard, or nobody.
    pub fn answered_by(&self) -> Option<String> {
        self.unanswered.is_none().then(|| DASHBOARD.to_owned())
    }

    /// Why it was not allowed (for a question that was not).
    pub fn why_not(&self) -> String {
        self.unanswered
            .clone()
            .unwrap_or_else(|| format!("the person declined on {DASHBOARD}"))
    }
}

impl Jobs {
    /// Park `asked` for job `id` and wait for the person's answer on the dashboard, or for
    /// the job to stop. Then, or when this future is dropped (the CLI gave up asking), an
    /// unanswered question is withdrawn.
    pub async fn ask_on_dashboard(&self, id: &JobId, asked: &str) -> Settled {
        let (answer, unanswered) = match self.park_and_wait(id, asked).await {
            Ok(Some(true)) => (PersonAnswer::Allowed, None),
            Ok(Some(false)) => (PersonAnswer::Declined, None),
            Ok(None) => (
                PersonAnswer::NobodyToAsk,
                Some("the job stopped before the person answered on the dashboard".to_owned()),
            ),
            Err(error) => (
                PersonAnswer::NobodyToAsk,
                Some(format!("parking it for the dashboard failed: {error}")),
            ),
        };
        Settled { answer, unanswered }
    }

    /// Whether the person allowed `asked`; `None` when the job stopped first.
    async fn park_and_wait(&self, id: &JobId, asked: &str) -> Result<Option<bool>, JobsError> {
        let job = self
            .live(id)
            .ok_or_else(|| JobsError::Unknown(id.clone()))?;
        let (key, text) = (id.clone(), asked.to_owned());
        let number = self
            .query(move |store| store.park_question(&key, &text))
            .await?;
        let parked = Parked {
            store: self.store()?,
            job: job.clone(),
            number,
        };
        job.set_waiting_for(Some(asked));
        self.tell_waiters(&job);
        let answer = loop {
            tokio::select! {
                () = job.cancel_token().cancelled() => break Ok(None),
                () = tokio::time::sleep(STORE_POLL) => {}
            }
            let key = id.clone();
            match self
                .query(move |store| store.parked_answer(&key, number))
                .await
            {
                Ok(Some(allowed)) => break Ok(Some(allowed)),
                Ok(None) => {}
                Err(error) => break Err(error),
            }
        };
        drop(parked);
        self.tell_waiters(&job);
        answer
    }

    /// Resolves once `job` waits on the person's answer on the dashboard.
    pub async fn until_waiting(&self, job: &Job) {
        loop {
            let changed = self.ended_or_parked();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if job.waiting_for().is_some() {
                return;
            }
            changed.await;
        }
    }

    /// Ask `ask` on the dashboard before `job` starts: `Ok` once the person allowed it (then
    /// recorded with the job), else the outcome of a job that never ran.
    pub(super) async fn ask_first(&self, job: &Job, ask: AskFirst) -> Result<(), Outcome> {
        let settled = self.ask_on_dashboard(&job.id, &ask.question).await;
        let question = PersonQuestion {
            about: QuestionAbout::ServerBounds {
                bounds: ask.bounds.clone(),
            },
            answer: settled.answer,
            answered_by: settled.answered_by(),
            why: settled.unanswered.clone(),
        };
        if let Some(transcript) = self.transcript(&job.id) {
            transcript.events(&[AgentEvent::Question(question)]);
        }
        if settled.answer == PersonAnswer::Allowed {
            let (id, bounds) = (job.id.clone(), ask.bounds);
            self.record(move |store| store.set_allowed_past(&id, &bounds))
                .await;
            return Ok(());
        }
        let error = ErrorInfo {
            kind: ErrorKind::Refused,
            message: format!("{} ({})", ask.refusal, settled.why_not()),
            hint: None,
        };
        let status = match job.cancel_token().is_cancelled() {
            true => Status::Cancelled,
            false => Status::Failed,
        };
        Err(Outcome::not_run(job.agent.name(), status, error))
    }
}

/// A parked question until its run is done with it: then settled in the store, and the job
/// runs on.
struct Parked {
    store: Store,
    job: Arc<Job>,
    number: u32,
}

impl Drop for Parked {
    fn drop(&mut self) {
        self.job.set_waiting_for(None);
        let (store, id, number) = (self.store.clone(), self.job.id.clone(), self.number);
        let settle = move || {
            if let Err(error) = store.settle_parked(&id, number) {
                tracing::warn!(job = %id, %error, "could not record that question {number} was settled");
            }
        };
        // Off the runtime's threads where there is one: a drop cannot wait, nor need it.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(settle)),
            Err(_) => settle(),
        }
    }
}
