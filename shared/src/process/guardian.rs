//! The guardian: one small process per server (or `run`) that outlives it and, when it dies
//! however it dies (SIGKILL included), kills every process of its runs.
//!
//! It is our own binary run again with a hidden first argument, in a session of its own (a
//! signal to our group or session does not reach it). Its stdin is a pipe whose write end
//! only we hold (close-on-exec, so no CLI inherits it): it blocks reading, and EOF means we
//! are gone, on every OS. Then it SIGKILLs, round after round until a round finds none, every
//! process of our runs as the platform finds them ([`crate::platform::kill_runs`]: on Linux
//! the marker in each environment, killed through a pidfd after it is checked again; on macOS
//! also the descendants of the server by unique id), removes the temporary directories those
//! runs left, and exits. On a normal exit it finds nothing and exits at once.
//! Its stdout is /dev/null: it must never hold the MCP channel open. A server (or `run`)
//! starts it before anything else, so no process of a run is ever started unguarded.
//!
//! On Windows there is no guardian process: every run's tree is a job object with
//! kill-on-close whose only handle the server holds, so the server's death by any means closes
//! the handles and the kernel kills every run. [`Guardian::start`] starts nothing there.

use std::io::Read;
#[cfg(unix)]
use std::process::{ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crate::marker::MarkerPrefix;
use crate::platform::{self, RunsOf, UNSURE_FOR};

/// The hidden first argument that makes the binary a guardian.
pub const GUARDIAN_SUBCOMMAND: &str = "__guardian";

/// A pause between kill rounds, for the killed processes to finish dying.
const ROUND: Duration = Duration::from_millis(5);
/// A guardian that still finds marked processes after this long (a fork bomb) gives up.
const GIVE_UP: Duration = Duration::from_secs(10);

/// Why the guardian could not start; the message says what to check.
#[derive(Debug, thiserror::Error)]
pub enum GuardianError {
    /// Its process could not be spawned.
    #[error(
        "cannot start the guardian process ({0}): the processes of our runs would outlive a \
         SIGKILL of this process; check that the binary is executable (and on Linux that \
         /proc is mounted)"
    )]
    Start(std::io::Error),
}

/// The running guardian of this process: the write end of its stdin. Dropping it (or our
/// death) closes the pipe. The process is not waited for: it ends only after our pipe closes,
/// normally as we exit, and whoever adopts it then reaps it. On Windows, nothing (see the
/// module's doc).
pub struct Guardian {
    #[cfg(unix)]
    _pipe: ChildStdin,
}

impl Guardian {
    /// On Windows the kernel keeps the guardian's promise by itself: the server holds every
    /// run's job handle, each job kills its tree when its last handle closes, and the server's
    /// death closes them all. So there is no process to start.
    #[cfg(windows)]
    pub fn start() -> Result<Self, GuardianError> {
        Ok(Self {})
    }

    /// Start the guardian of this process's runs. Call it before the first run.
    #[cfg(unix)]
    pub fn start() -> Result<Self, GuardianError> {
        let child = Command::new(platform::current_exe().map_err(GuardianError::Start)?)
            .arg(GUARDIAN_SUBCOMMAND)
            .arg(MarkerPrefix::of_this_process().as_str())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(GuardianError::Start)?;
        let pipe = child
            .stdin
            .ok_or_else(|| GuardianError::Start(std::io::Error::other("stdin was not piped")))?;
        Ok(Self { _pipe: pipe })
    }
}

/// The guardian's whole life: wait for EOF on stdin, then kill every process marked with
/// `prefix` until none is left. Returns how many processes it killed; the caller then removes
/// what those runs left in the temp dir ([`crate::sandbox::remove_left_by`]).
pub fn run_guardian(prefix: &MarkerPrefix) -> usize {
    // Out of our parent's group and session, so a signal to those does not reach us. Done
    // here rather than before exec so the parent can spawn us the fast way (posix_spawn).
    #[cfg(unix)]
    let _ = nix::unistd::setsid();
    // Whose runs: the server's, known now, while it still lives.
    let runs = RunsOf::parent();
    let mut stdin = std::io::stdin().lock();
    let mut buf = [0u8; 64];
    // Nothing is ever written: any end of the read (EOF or an error) means the server is gone.
    while let Ok(1..) = stdin.read(&mut buf) {}
    kill_until_none(prefix, &runs)
}

fn kill_until_none(prefix: &MarkerPrefix, runs: &RunsOf) -> usize {
    let started = Instant::now();
    let mut total = 0;
    loop {
        let pass = platform::kill_runs(prefix, runs);
        total += pass.killed;
        // A process in the middle of an exec reads as no environment for a moment.
        let unsure = pass.unsure > 0 && started.elapsed() < UNSURE_FOR;
        if (pass.killed == 0 && !unsure) || started.elapsed() >= GIVE_UP {
            return total;
        }
        std::thread::sleep(ROUND);
    }
}
