//! A job waiting on the person (`--park-questions`): a question nobody can be asked through
//! the client is parked in the store, the job `needs_input`, and its run waits until the
//! person answers on the dashboard (never the model: no tool answers it) or the job stops.

use std::sync::Arc;

use super::job::Job;
use super::manager::{Jobs, JobsError, STORE_POLL};
use super::store::{JobId, Store};

impl Jobs {
    /// Park `asked` for job `id` and wait for the person's answer on the dashboard: whether
    /// they allowed it, or `None` when the job stopped first. Then, or when this future is
    /// dropped (the CLI gave up asking), an unanswered question is withdrawn.
    pub async fn ask_on_dashboard(
        &self,
        id: &JobId,
        asked: &str,
    ) -> Result<Option<bool>, JobsError> {
        let job = self
            .live(id)
            .ok_or_else(|| JobsError::Unknown(id.clone()))?;
        let (key, text) = (id.clone(), asked.to_owned());
        let number = self
            .query(move |store| store.park_question(&key, &text))
            .await?;
        let parked = Parked {
            store: self.store()?.clone(),
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
