//! How a serve ends, whichever transport carries it: the server-wide shutdown, the runs to
//! wait for and the deadline that bounds both, and the exit codes.
//!
//! Shutdown (stdin EOF, SIGTERM, SIGHUP, SIGINT when idle, the launcher's pipe closing): every
//! run is cancelled at once and torn down in its own task; the transport waits for all of them
//! up to the engine's grace plus 1.2 s, SIGKILLs whatever is left, gives the answers until the
//! grace plus 1.8 s to reach a client still reading, and exits 0.

use std::time::Duration;

use cli_agent_engine::process::kill_every_run;
use tokio::time::{Instant, timeout_at};
use tokio_util::task::TaskTracker;

use super::calls::Shutdown;

pub const EXIT_OK: u8 = 0;
pub const EXIT_SESSION_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

/// The whole shutdown takes at most the engine's grace plus this: the promise is "plus 2 s".
const SHUTDOWN_MARGIN: Duration = Duration::from_millis(1800);
/// The end of the margin, kept for the answers of the stopped calls to reach the client.
const FLUSH_RESERVE: Duration = Duration::from_millis(600);

/// What every transport shares to stop: the server-wide shutdown and the runs to wait for.
pub struct Lifecycle {
    pub shutdown: Shutdown,
    runs: TaskTracker,
    grace: Duration,
}

impl Lifecycle {
    /// `runs` tracks every run's teardown; `grace` is the engine's.
    pub fn new(shutdown: Shutdown, runs: TaskTracker, grace: Duration) -> Self {
        Self {
            shutdown,
            runs,
            grace,
        }
    }

    /// When the whole shutdown must be over, counted from now.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.grace + SHUTDOWN_MARGIN
    }

    /// Wait for every run's teardown until the answers' reserve before `deadline`; then kill
    /// what is left.
    pub async fn stop_runs(&self, deadline: Instant) {
        self.runs.close();
        if timeout_at(deadline - FLUSH_RESERVE, self.runs.wait())
            .await
            .is_err()
        {
            let killed = kill_every_run();
            tracing::warn!(
                runs = self.runs.len(),
                killed,
                "runs were still stopping after the grace period: killed their processes"
            );
        }
    }
}
