//! Looking jobs up in the store, off the runtime's threads: a job of another server, or one
//! that ended long enough ago to have left memory.

use std::sync::Arc;

use super::job::Finished;
use super::manager::{Jobs, JobsError};
use super::store::{CancelRequest, JobId, JobRecord, ListFilter, Store, StoreError, TextPage};

impl Jobs {
    /// Run a query on the store in the blocking pool.
    pub(super) async fn query<T: Send + 'static>(
        &self,
        query: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, JobsError> {
        let store = self.store()?;
        tokio::task::spawn_blocking(move || query(&store))
            .await
            .map_err(|error| JobsError::Lookup(error.to_string()))?
            .map_err(JobsError::from)
    }

    /// The record of a job, which must exist.
    pub async fn record_of(&self, id: &JobId) -> Result<JobRecord, JobsError> {
        let key = id.clone();
        self.query(move |store| store.get(&key))
            .await?
            .ok_or_else(|| JobsError::Unknown(id.clone()))
    }

    /// A job's status and outcome once it has ended; `None` while it has not.
    pub async fn stored_finished(
        &self,
        record: &JobRecord,
    ) -> Result<Option<Arc<Finished>>, JobsError> {
        if !record.status.is_finished() {
            return Ok(None);
        }
        let (id, status) = (record.id.clone(), record.status);
        let outcome = self.query(move |store| store.outcome(&id)).await?;
        Ok(outcome.map(|outcome| Arc::new(Finished { status, outcome })))
    }

    /// A page of a finished job's answer (characters) or transcript (events).
    pub async fn page(
        &self,
        id: &JobId,
        transcript: bool,
        offset: u64,
        limit: u64,
    ) -> Result<(JobRecord, TextPage), JobsError> {
        let record = self.record_of(id).await?;
        let key = id.clone();
        let page = self
            .query(move |store| match transcript {
                true => store.transcript_page(&key, offset, limit),
                false => store.answer_page(&key, offset, limit),
            })
            .await?
            .ok_or_else(|| JobsError::Unknown(id.clone()))?;
        Ok((record, page))
    }

    pub async fn request_cancel(&self, id: &JobId) -> Result<CancelRequest, JobsError> {
        self.record_of(id).await?;
        let key = id.clone();
        self.query(move |store| store.request_cancel(&key)).await
    }

    pub async fn list(&self, filter: ListFilter) -> Result<Vec<JobRecord>, JobsError> {
        self.query(move |store| store.list(&filter)).await
    }
}
