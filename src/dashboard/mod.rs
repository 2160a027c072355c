//! `cli-agent-mcp dashboard`: every run and job of the store (all servers of this user share
//! it), live in a browser page. Loopback only, behind a one-time token traded for a session
//! cookie (`auth.rs`); the pages and their assets are embedded (`pages.rs`); the store is
//! polled for what changed and pushed as server-sent events (`live/`). [`router`] serves the
//! same under another server.

mod auth;
mod cancel;
mod error;
mod live;
mod markdown;
mod pages;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::args::DashboardArgs;
use crate::jobs::store::{Store, StoreError, StoreSettings};
use auth::Access;
pub use error::DashboardError;

/// What the routes share. Cheap to clone.
#[derive(Clone)]
pub struct DashboardState {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    /// Where browsers reach it.
    addr: SocketAddr,
    access: Access,
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
        let access = Access::new(browser_hosts(addr, names)).map_err(DashboardError::Random)?;
        Ok(Self {
            inner: Arc::new(Inner {
                store,
                addr,
                access,
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

    fn store(&self) -> &Store {
        &self.inner.store
    }

    fn access(&self) -> &Access {
        &self.inner.access
    }

    fn shutdown(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// Runs a query on the store in the blocking pool.
    async fn query<T: Send + 'static>(
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

/// The dashboard's routes, for `cli-agent-mcp dashboard` and for another server to merge at `/`
/// (`Router::new().nest_service("/mcp", mcp).merge(router(state))`). They bring their own
/// guard (Host, session cookie, CSRF): a bearer-token check in front of them would lock browsers
/// out, since a browser cannot send one.
pub fn router(state: DashboardState) -> Router {
    Router::new()
        .route("/", get(pages::index))
        .route("/events", get(live::jobs_feed))
        .route("/jobs/{id}", get(pages::job))
        .route("/jobs/{id}/events", get(live::job_feed))
        .route("/jobs/{id}/cancel", post(cancel::cancel))
        .route("/assets/{name}", get(pages::asset))
        .fallback(pages::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::guard,
        ))
        .layer(axum::middleware::map_response(pages::secure_headers))
        .with_state(state)
}

/// The command: serves until SIGINT or SIGTERM; exit code 0, or 1 with the reason on stderr.
pub async fn run(args: DashboardArgs, store: StoreSettings) -> u8 {
    match serve(args, store).await {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("error: {error}");
            1
        }
    }
}

async fn serve(args: DashboardArgs, settings: StoreSettings) -> Result<(), DashboardError> {
    let store = tokio::task::spawn_blocking(move || Store::open_configured(&settings))
        .await
        .map_err(|error| DashboardError::Query(error.to_string()))??;
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, args.port))
        .await
        .map_err(|source| DashboardError::Bind {
            port: args.port,
            source,
        })?;
    let port = listener
        .local_addr()
        .map_err(|source| DashboardError::Bind {
            port: args.port,
            source,
        })?
        .port();
    let shutdown = CancellationToken::new();
    let addr = SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port);
    let state = DashboardState::new(store, addr, &[], shutdown.clone())?;
    announce(&state.login_url())?;
    stop_on_signals(shutdown.clone())?;
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .map_err(DashboardError::Serve)
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

/// The URL on stdout (for a script to read), what to do with it on stderr.
fn announce(url: &str) -> Result<(), DashboardError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{url}")
        .and_then(|()| out.flush())
        .map_err(DashboardError::Stdout)?;
    eprintln!(
        "dashboard: open the URL above in a browser; it logs in one browser once. Ctrl-C stops."
    );
    Ok(())
}

fn stop_on_signals(shutdown: CancellationToken) -> Result<(), DashboardError> {
    let mut sigint = signal(SignalKind::interrupt()).map_err(DashboardError::Signals)?;
    let mut sigterm = signal(SignalKind::terminate()).map_err(DashboardError::Signals)?;
    tokio::spawn(async move {
        tokio::select! {
            _ = sigint.recv() => {}
            _ = sigterm.recv() => {}
        }
        shutdown.cancel();
    });
    Ok(())
}
