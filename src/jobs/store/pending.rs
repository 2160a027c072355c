//! The job store while it opens: opening is SQLite's schema check, a new file's tables and their
//! fsyncs, marking a killed server's jobs interrupted and pruning old ones, several
//! milliseconds that no `initialize` needs. A server opens it on a blocking thread as it
//! starts, and whatever needs the store first waits for it.

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};

use super::Store;

/// The store once it is open, or why it is unusable; cheap to clone.
#[derive(Clone)]
pub struct PendingStore(Shared<BoxFuture<'static, Result<Store, String>>>);

impl PendingStore {
    /// Starts `open` on the blocking pool at once, whether or not anyone waits for it yet.
    pub fn open(open: impl FnOnce() -> Result<Store, String> + Send + 'static) -> Self {
        let opening = tokio::task::spawn_blocking(open);
        let opened = async move { opening.await.unwrap_or_else(|error| Err(error.to_string())) };
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
