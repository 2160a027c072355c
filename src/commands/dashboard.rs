//! `cli-agent-mcp dashboard`: the dashboard alone, on 127.0.0.1, until SIGINT or SIGTERM. Its
//! login URL goes to stdout for a script to read.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};

use tokio_util::sync::CancellationToken;

use crate::dashboard::{self, DashboardError, DashboardState};
use crate::jobs::store::{Store, StoreSettings};
use crate::stop_signals::StopSignals;

/// The command: serves until SIGINT or SIGTERM; exit code 0, or 1 with the reason on stderr.
pub async fn run(port: u16, store: StoreSettings) -> u8 {
    match serve(port, store).await {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("error: {error}");
            1
        }
    }
}

async fn serve(port: u16, settings: StoreSettings) -> Result<(), DashboardError> {
    let store = tokio::task::spawn_blocking(move || Store::open_configured(&settings))
        .await
        .map_err(|error| DashboardError::Query(error.to_string()))??;
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .await
        .map_err(|source| DashboardError::Bind { port, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| DashboardError::Bind { port, source })?
        .port();
    let shutdown = CancellationToken::new();
    let addr = SocketAddr::new(Ipv4Addr::LOCALHOST.into(), bound);
    let state = DashboardState::new(store, addr, &[], shutdown.clone())?;
    announce(&state.login_url())?;
    stop_on_signals(shutdown.clone())?;
    axum::serve(listener, dashboard::router(state))
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .map_err(DashboardError::Serve)
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

/// SIGINT or SIGTERM (Ctrl-C or Ctrl-Break on Windows) stops it.
fn stop_on_signals(shutdown: CancellationToken) -> Result<(), DashboardError> {
    let mut signals = StopSignals::install(false).map_err(DashboardError::Signals)?;
    tokio::spawn(async move {
        if signals.recv().await.is_some() {
            shutdown.cancel();
        }
    });
    Ok(())
}
