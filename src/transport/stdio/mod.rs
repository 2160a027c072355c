//! MCP over stdio: one session on stdin/stdout, served until it ends or the server shuts down.
//!
//! `channel` carries the messages, `inbound` reads each line (answering every malformed one)
//! and `stdin` notices the client leaving. On a shutdown the runs are stopped within the
//! lifecycle's deadline, the stopped calls' answers are let out, then the session ends: rmcp's
//! own wait of up to 5 s after EOF is never waited out.

mod channel;
#[cfg(test)]
mod fuzz;
mod inbound;
mod stdin;

use std::sync::Arc;

use rmcp::service::{QuitReason, ServerInitializeError};
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout_at};
use tokio_util::sync::CancellationToken;

use self::channel::Channel;
use self::stdin::EofWatch;
use crate::mcp::{AgentServer, EXIT_OK, EXIT_SESSION_FAILED, Lifecycle, Shutdown, ShutdownCause};

#[derive(Debug, thiserror::Error)]
enum SessionError {
    #[error("the MCP session could not start: {0}")]
    Start(Box<ServerInitializeError>),
    #[error("the MCP session failed: {0}")]
    Failed(#[from] tokio::task::JoinError),
}

/// Serve one MCP session on stdin/stdout, then shut down; the result is the exit code.
pub async fn serve(server: AgentServer, lifecycle: Lifecycle) -> u8 {
    let shutdown = lifecycle.shutdown.clone();
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
    let deadline = lifecycle.deadline();
    lifecycle.stop_runs(deadline).await;
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
    let running = channel::serve(Arc::new(server), channel, session)
        .await
        .map_err(|error| SessionError::Start(Box::new(error)))?;
    Ok(running.waiting().await?)
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
