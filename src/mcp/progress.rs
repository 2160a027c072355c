//! Progress notifications of a call: "codex: running `cargo test`".
//!
//! A job keeps its latest line ([`JobProgress`]); a task of the call's own turns it into
//! notifications, at most one per [`MIN_INTERVAL`], with a rising progress value. While the run is silent it
//! repeats the last line every heartbeat, for clients that reset their timeout on progress.
//! It stops at once when the call is cancelled, and the caller waits for it to stop before
//! answering, so no notification follows the response.

use std::time::Duration;

use cli_agent_engine::redact::redact;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};
use tokio_util::sync::CancellationToken;

use crate::jobs::JobProgress;

/// The shortest time between two notifications of one call.
pub const MIN_INTERVAL: Duration = Duration::from_millis(250);
/// How long a notification being written may hold up the call's response.
const SEND_LIMIT: Duration = Duration::from_secs(1);

/// The reporting task of one call.
pub struct ProgressReporter {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl ProgressReporter {
    /// Report `progress` to `peer` under `token`, each line after `label`. `stop` ends the
    /// reports at once; it should fire when the call is cancelled.
    pub fn start(
        peer: Peer<RoleServer>,
        token: ProgressToken,
        label: String,
        progress: JobProgress,
        heartbeat: Option<Duration>,
        stop: CancellationToken,
    ) -> Self {
        let reporter = Reporter {
            peer,
            token,
            label,
            heartbeat,
            started: Instant::now(),
            sent: 0,
        };
        let task = tokio::spawn(reporter.run(progress, stop.clone()));
        Self { stop, task }
    }

    /// Stop reporting and wait until a notification being written is out.
    pub async fn finish(self) {
        self.stop.cancel();
        if let Err(error) = self.task.await {
            tracing::warn!(%error, "the progress task failed");
        }
    }
}

struct Reporter {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    label: String,
    heartbeat: Option<Duration>,
    started: Instant,
    sent: u64,
}

impl Reporter {
    async fn run(mut self, latest: JobProgress, stop: CancellationToken) {
        loop {
            let message = tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = latest.changed() => latest.line(),
                () = until(self.heartbeat) => {
                    let line = latest.line().unwrap_or_else(|| "working".to_owned());
                    Some(format!("{line} ({} s)", self.started.elapsed().as_secs()))
                }
            };
            if let Some(message) = message {
                self.send(message).await;
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = sleep(MIN_INTERVAL) => {}
            }
        }
    }

    async fn send(&mut self, message: String) {
        self.sent += 1;
        // A tool's command line or a CLI's error can carry a key.
        let message = redact(&message);
        let param = ProgressNotificationParam::new(self.token.clone(), self.sent as f64)
            .with_message(format!("{}: {message}", self.label));
        match tokio::time::timeout(SEND_LIMIT, self.peer.notify_progress(param)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::debug!(%error, "could not send a progress notification"),
            Err(_) => tracing::debug!("a progress notification was not written in time"),
        }
    }
}

async fn until(heartbeat: Option<Duration>) {
    match heartbeat {
        Some(interval) => sleep(interval).await,
        None => std::future::pending().await,
    }
}
