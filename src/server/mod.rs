//! `cli-agent-mcp serve`: MCP over stdio, one tool per CLI.
//!
//! The layer is thin: `tools` turns arguments into a run request, the engine runs it,
//! `result` turns the outcome into a tool result, `progress` reports events on the way.
//! `transport` carries the MCP channel: `inbound` reads each line, answering every malformed
//! one, and `stdin` notices the client leaving. The rest is the lifecycle: `calls` and
//! `signals` decide which runs stop and why, and [`serve`] bounds the shutdown.
//!
//! Shutdown (stdin EOF, SIGTERM, SIGHUP, SIGINT when idle): every run is cancelled at once and
//! torn down in its own task; the server waits for all of them up to the engine's grace plus
//! 1.2 s, SIGKILLs whatever is left, gives the answers until the grace plus 1.8 s to reach a
//! client still reading, and exits 0. rmcp's own wait of up to 5 s after EOF is never waited out.

mod calls;
#[cfg(test)]
mod fuzz;
mod handler;
mod inbound;
mod policy;
mod progress;
mod result;
mod signals;
mod stdin;
mod tools;
mod transport;

use std::sync::Arc;
use std::time::Duration;

use cli_agent_engine::process::{become_subreaper, kill_every_run};
use cli_agent_engine::{Engine, EngineConfig};
use rmcp::service::{QuitReason, ServerInitializeError};
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout_at};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use self::signals::SigintMode;

use self::calls::{ActiveCalls, Shutdown, ShutdownCause};
use self::handler::AgentServer;
use self::policy::Policy;
use self::stdin::EofWatch;
use self::tools::Catalogue;
use self::transport::Channel;
use crate::args::ServeArgs;

const EXIT_OK: u8 = 0;
const EXIT_SESSION_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;

/// The whole shutdown takes at most the engine's grace plus this: the promise is "plus 2 s".
const SHUTDOWN_MARGIN: Duration = Duration::from_millis(1800);
/// The end of the margin, kept for the answers of the stopped calls to reach the client.
const FLUSH_RESERVE: Duration = Duration::from_millis(600);

#[derive(Debug, thiserror::Error)]
enum SessionError {
    #[error("the MCP session could not start: {0}")]
    Start(Box<ServerInitializeError>),
    #[error("the MCP session failed: {0}")]
    Failed(#[from] tokio::task::JoinError),
}

pub async fn serve(args: ServeArgs, config: EngineConfig) -> u8 {
    let catalogue = match Catalogue::new(&args.enable, &args.disable) {
        Ok(catalogue) => catalogue,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_USAGE;
        }
    };
    let policy = match Policy::new(&args.allow_root, args.max_permission) {
        Ok(policy) => policy,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_USAGE;
        }
    };
    if let Err(error) = become_subreaper() {
        tracing::warn!(%error, "cannot become a subreaper: tool processes that escape a CLI's session may outlive it");
    }
    let calls = ActiveCalls::default();
    let shutdown = Shutdown::new(calls.clone());
    if let Err(error) = signals::watch(args.sigint, calls.clone(), shutdown.clone()) {
        eprintln!("error: cannot install signal handlers: {error}");
        return EXIT_USAGE;
    }
    let grace = config.grace;
    let runs = TaskTracker::new();
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        tools = %catalogue.names(),
        roots = %policy.describe_roots(),
        max_permission = %policy.max_permission(),
        "serving MCP on stdio"
    );
    let server = AgentServer {
        engine: Arc::new(Engine::new(config)),
        catalogue,
        calls,
        shutdown: shutdown.clone(),
        runs: runs.clone(),
        heartbeat: (args.progress_heartbeat_secs > 0)
            .then(|| Duration::from_secs(args.progress_heartbeat_secs)),
        policy,
    };
    let session = CancellationToken::new();
    let mut serving = tokio::spawn(run_session(server, shutdown.clone(), session.clone()));

    let ended = tokio::select! {
        biased;
        () = shutdown.triggered() => None,
        ended = &mut serving => {
            shutdown.trigger(ShutdownCause::SessionEnded);
            Some(ended)
        }
    };
    let deadline = Instant::now() + grace + SHUTDOWN_MARGIN;
    stop_runs(&runs, deadline - FLUSH_RESERVE).await;
    match ended {
        None => {
            flush(serving, session, deadline).await;
            EXIT_OK
        }
        Some(ended) => session_exit_code(ended),
    }
}

/// Serve one MCP session on stdin/stdout until it ends.
async fn run_session(
    server: AgentServer,
    shutdown: Shutdown,
    session: CancellationToken,
) -> Result<QuitReason, SessionError> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let channel = Channel::new(EofWatch::new(stdin, shutdown), stdout);
    let running = transport::serve(Arc::new(server), channel, session)
        .await
        .map_err(|error| SessionError::Start(Box::new(error)))?;
    Ok(running.waiting().await?)
}

/// Wait for every run's teardown until `deadline`; then kill what is left.
async fn stop_runs(runs: &TaskTracker, deadline: Instant) {
    runs.close();
    if timeout_at(deadline, runs.wait()).await.is_err() {
        let killed = kill_every_run();
        tracing::warn!(
            runs = runs.len(),
            killed,
            "runs were still stopping after the grace period: killed their processes"
        );
    }
}

/// Let the answers of the stopped calls out, then end the session, by `deadline`.
async fn flush(
    serving: JoinHandle<Result<QuitReason, SessionError>>,
    session: CancellationToken,
    deadline: Instant,
) {
    session.cancel();
    if timeout_at(deadline, serving).await.is_err() {
        tracing::debug!("the MCP session was still closing at exit");
    }
}

fn session_exit_code(
    ended: Result<Result<QuitReason, SessionError>, tokio::task::JoinError>,
) -> u8 {
    match ended
        .map_err(SessionError::from)
        .and_then(|session| session)
    {
        Ok(reason) => {
            tracing::info!(?reason, "the MCP session ended");
            EXIT_OK
        }
        Err(error) => {
            tracing::error!(%error);
            EXIT_SESSION_FAILED
        }
    }
}
