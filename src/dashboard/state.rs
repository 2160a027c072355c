//! What the dashboard's routes share: the store, where browsers reach it, their access, the
//! guard in front of them and the shutdown that ends the live feeds.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::auth::{self, Access};
use super::error::DashboardError;
use crate::jobs::store::{Store, StoreError};
use crate::web::{CheckLayer, Guard};

/// What the routes share. Cheap to clone.
#[derive(Clone)]
pub struct DashboardState {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    /// Where browsers reach it.
    addr: SocketAddr,
    access: Arc<Access>,
    /// The Host and Origin check for the hosts browsers reach it at.
    guard: CheckLayer<Guard>,
    /// Cancelled when the server stops: ends the live feeds, which would hold it open.
    shutdown: CancellationToken,
}

impl DashboardState {
    /// A dashboard over `store`, served at `addr` (an unspecified address stands for loopback)
    /// and reached by browsers at it, at `localhost` and at the `names` (`name` or `name:port`),
    /// its feeds ending when `shutdown` is cancelled.
    pub fn new(
        store: Store,
        addr: SocketAddr,
        names: &[String],
        shutdown: CancellationToken,
    ) -> Result<Self, DashboardError> {
        let addr = match addr.ip().is_unspecified() {
            true => SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port()),
            false => addr,
        };
        let access = Access::new().map_err(DashboardError::Random)?;
        Ok(Self {
            inner: Arc::new(Inner {
                store,
                addr,
                access: Arc::new(access),
                guard: CheckLayer::new(auth::guard(browser_hosts(addr, names))),
                shutdown,
            }),
        })
    }

    /// The URL that logs a browser in, once: `http://ADDR/?token=…`.
    pub fn login_url(&self) -> String {
        format!(
            "http://{}/?token={}",
            self.inner.addr,
            self.inner.access.token().as_str()
        )
    }

    pub(super) fn store(&self) -> &Store {
        &self.inner.store
    }

    pub(super) fn access(&self) -> &Arc<Access> {
        &self.inner.access
    }

    pub(super) fn guard(&self) -> &CheckLayer<Guard> {
        &self.inner.guard
    }

    pub(super) fn shutdown(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// Runs a query on the store in the blocking pool.
    pub(super) async fn query<T: Send + 'static>(
        &self,
        query: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, DashboardError> {
        let store = self.store().clone();
        tokio::task::spawn_blocking(move || query(&store))
            .await
            .map_err(|error| DashboardError::Query(error.to_string()))?
            .map_err(DashboardError::Store)
    }
}

/// The Host values a browser sends for a server at `addr`: `addr`, `localhost` and `names`, each
/// with the port unless it names one.
fn browser_hosts(addr: SocketAddr, names: &[String]) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![addr.to_string(), format!("localhost:{port}")];
    hosts.extend(names.iter().map(|name| match name.contains(':') {
        true => name.clone(),
        false => format!("{name}:{port}"),
    }));
    hosts
}
