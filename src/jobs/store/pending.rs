//! The job store while it opens: opening is SQLite's schema check, a new file's tables and their
//! fsyncs, marking a killed server's jobs interrupted and pruning old ones, several
//! milliseconds that no `initialize` needs. A server opens it on a blocking thread once it has
//! answered its client, and whatever needs the store first waits for it.

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};

use super::Store;
use crate::first_answer::AfterFirstAnswer;

/// The store once it is open, or why it is unusable; cheap to clone.
#[derive(Clone)]
pub struct PendingStore(Shared<BoxFuture<'static, Result<Store, String>>>);

impl PendingStore {
    /// Starts `open` on the blocking pool once `after` opens (on the async runtime), whether
    /// or not anyone waits for the store yet.
    pub fn open(
        after: &AfterFirstAnswer,
        open: impl FnOnce() -> Result<Store, String> + Send + 'static,
    ) -> Self {
        let (started, opening) = tokio::sync::oneshot::channel();
        after.then(move || {
            let _ = started.send(tokio::task::spawn_blocking(open));
        });
        let opened = async move {
            let opening = opening
                .await
                .map_err(|_| "the server stopped before it opened the job store".to_owned())?;
            opening.await.unwrap_or_else(|error| Err(error.to_string()))
        };
        Self(opened.boxed().shared())
    }

    /// A store already open, or known to be unusable.
    #[cfg(test)]
    pub fn ready(store: Result<Store, String>) -> Self {
        Self(std::future::ready(store).boxed().shared())
    }

    /// The store, once it is open; or why it is unusable.
    pub async fn get(&self) -> Result<Store, String> {
        self.0.clone().await
    }
}
