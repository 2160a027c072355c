//! Signals. SIGTERM and SIGHUP shut the server down. SIGINT follows `--sigint`: a terminal's
//! Ctrl-C reaches every process of the foreground group, the server included, and a host that
//! forwards it usually means "stop what you are doing", not "go away".

use std::time::Duration;

use tokio::signal::unix::{SignalKind, signal};
use tokio::time::Instant;

use std::sync::Arc;

use super::calls::{Shutdown, ShutdownCause};
use crate::jobs::{Jobs, StopReason};

/// How close a second SIGINT must follow one that cancelled calls to shut the server down in
/// `cancel-then-exit` mode.
pub const SECOND_SIGINT_WINDOW: Duration = Duration::from_secs(2);

/// What SIGINT does (the command line's `--sigint`, mapped by `commands::serve`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SigintMode {
    /// Cancel the active calls and keep serving; exit when there are none.
    Cancel,
    /// Shut down, like SIGTERM.
    Exit,
    /// Like `cancel`, and a second SIGINT within 2 s shuts down.
    CancelThenExit,
}

/// What one SIGINT does.
#[derive(Debug, PartialEq, Eq)]
enum SigintAction {
    CancelCalls,
    Shutdown,
}

/// The SIGINT policy; `last_cancel` is when a SIGINT last cancelled calls.
fn on_sigint(
    mode: SigintMode,
    active_calls: usize,
    last_cancel: Option<Instant>,
    now: Instant,
) -> SigintAction {
    let repeated = last_cancel.is_some_and(|at| now.duration_since(at) <= SECOND_SIGINT_WINDOW);
    match mode {
        SigintMode::Exit => SigintAction::Shutdown,
        _ if active_calls == 0 => SigintAction::Shutdown,
        SigintMode::CancelThenExit if repeated => SigintAction::Shutdown,
        SigintMode::Cancel | SigintMode::CancelThenExit => SigintAction::CancelCalls,
    }
}

/// Install the handlers and act on each signal for the life of the server.
pub fn watch(mode: SigintMode, jobs: Arc<Jobs>, shutdown: Shutdown) -> std::io::Result<()> {
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        let mut last_cancel = None;
        loop {
            tokio::select! {
                Some(()) = sigint.recv() => {
                    let now = Instant::now();
                    match on_sigint(mode, jobs.unfinished(), last_cancel, now) {
                        SigintAction::Shutdown => shutdown.trigger(ShutdownCause::Sigint),
                        SigintAction::CancelCalls => {
                            let cancelled = jobs.stop_all(StopReason::Sigint);
                            tracing::info!(cancelled, "SIGINT: cancelled the running jobs");
                            last_cancel = Some(now);
                        }
                    }
                }
                Some(()) = sigterm.recv() => shutdown.trigger(ShutdownCause::Sigterm),
                Some(()) = sighup.recv() => shutdown.trigger(ShutdownCause::Sighup),
                else => return,
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigint_when_idle_shuts_down_in_every_mode() {
        let now = Instant::now();
        for mode in [
            SigintMode::Cancel,
            SigintMode::Exit,
            SigintMode::CancelThenExit,
        ] {
            assert_eq!(on_sigint(mode, 0, None, now), SigintAction::Shutdown);
        }
    }

    #[test]
    fn sigint_with_calls_cancels_them_unless_told_to_exit() {
        let now = Instant::now();
        assert_eq!(
            on_sigint(SigintMode::Cancel, 2, None, now),
            SigintAction::CancelCalls
        );
        assert_eq!(
            on_sigint(SigintMode::CancelThenExit, 2, None, now),
            SigintAction::CancelCalls
        );
        assert_eq!(
            on_sigint(SigintMode::Exit, 2, None, now),
            SigintAction::Shutdown
        );
    }

    #[test]
    fn only_cancel_then_exit_exits_on_a_second_sigint_inside_the_window() {
        let first = Instant::now();
        let soon = first + Duration::from_millis(500);
        let late = first + SECOND_SIGINT_WINDOW + Duration::from_millis(1);
        assert_eq!(
            on_sigint(SigintMode::CancelThenExit, 1, Some(first), soon),
            SigintAction::Shutdown
        );
        assert_eq!(
            on_sigint(SigintMode::CancelThenExit, 1, Some(first), late),
            SigintAction::CancelCalls
        );
        assert_eq!(
            on_sigint(SigintMode::Cancel, 1, Some(first), soon),
            SigintAction::CancelCalls
        );
    }
}
