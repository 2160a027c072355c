//! Progress notifications built from a run's events: "codex: running `cargo test`".
//!
//! The engine's observer is synchronous and called for every event, so it only records the
//! latest description; a task of its own turns that into notifications, at most one per
//! [`MIN_INTERVAL`], with a rising progress value. While the run is silent it
//! repeats the last line every heartbeat, for clients that reset their timeout on progress.
//! It stops at once when the call is cancelled, and the caller waits for it to stop before
//! answering, so no notification follows the response.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cli_agent_engine::redact::redact;
use cli_agent_engine::{AgentEvent, AgentKind};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};
use tokio_util::sync::CancellationToken;

/// The shortest time between two notifications of one call.
pub const MIN_INTERVAL: Duration = Duration::from_millis(250);
/// How long a notification being written may hold up the call's response.
const SEND_LIMIT: Duration = Duration::from_secs(1);

/// The observer's end: records what the run is doing.
pub struct ProgressFeed {
    latest: Arc<Latest>,
}

/// The latest line of a run, and a wake-up for the reporter when it changes.
#[derive(Default)]
struct Latest {
    line: Mutex<Option<String>>,
    changed: Notify,
}

impl Latest {
    fn line(&self) -> Option<String> {
        self.line
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

impl ProgressFeed {
    /// Called for every event of the run, so it costs little: it writes into the line it
    /// keeps rather than building a new one, and wakes the reporter with one atomic store
    /// (the reporter picks up only the latest line anyway).
    pub fn observe(&self, event: &AgentEvent) {
        let changed = {
            let mut latest = self
                .latest
                .line
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            match &mut *latest {
                Some(line) => event.describe_into(line),
                None => {
                    *latest = event.describe();
                    latest.is_some()
                }
            }
        };
        if changed {
            self.latest.changed.notify_one();
        }
    }
}

/// The reporting task of one call.
pub struct ProgressReporter {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl ProgressReporter {
    /// Start reporting to `peer` under `token`. `stop` ends the reports at once; it should fire
    /// when the call is cancelled.
    pub fn start(
        peer: Peer<RoleServer>,
        token: ProgressToken,
        agent: AgentKind,
        heartbeat: Option<Duration>,
        stop: CancellationToken,
    ) -> (ProgressFeed, Self) {
        let latest = Arc::new(Latest::default());
        let reporter = Reporter {
            peer,
            token,
            agent,
            heartbeat,
            started: Instant::now(),
            sent: 0,
        };
        let task = tokio::spawn(reporter.run(latest.clone(), stop.clone()));
        (ProgressFeed { latest }, Self { stop, task })
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
    agent: AgentKind,
    heartbeat: Option<Duration>,
    started: Instant,
    sent: u64,
}

impl Reporter {
    async fn run(mut self, latest: Arc<Latest>, stop: CancellationToken) {
        loop {
            let message = tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = latest.changed.notified() => latest.line(),
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
            .with_message(format!("{}: {message}", self.agent));
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
