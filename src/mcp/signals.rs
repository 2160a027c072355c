//! Signals. SIGTERM and SIGHUP shut the server down. SIGINT follows `--sigint`: a terminal's
//! Ctrl-C reaches every process of the foreground group, the server included, and a host that
//! forwards it usually means "stop what you are doing", not "go away". On Windows Ctrl-C is
//! SIGINT's twin, Ctrl-Break SIGTERM's and the console's closing SIGHUP's (see
//! [`crate::stop_signals`]).

use std::time::Duration;

use tokio::time::Instant;

use std::sync::Arc;

use super::calls::{Shutdown, ShutdownCause};
use crate::jobs::{Jobs, StopReason};
use crate::stop_signals::{StopSignal, StopSignals};

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
    let mut signals = StopSignals::install(true)?;
    tokio::spawn(async move {
        let mut last_cancel = None;
        while let Some(signal) = signals.recv().await {
            match signal {
                StopSignal::Interrupt => {
                    let now = Instant::now();
                    match on_sigint(mode, jobs.unfinished(), last_cancel, now) {
                        SigintAction::Shutdown => shutdown.trigger(ShutdownCause::Sigint),
                        SigintAction::CancelCalls => {
                            let cancelled = jobs.stop_all(StopReason::Sigint);
                            let by = signal.name();
                            tracing::info!(cancelled, "{by}: cancelled the running jobs");
                            last_cancel = Some(now);
                        }
                    }
                }
                StopSignal::Terminate => shutdown.trigger(ShutdownCause::Sigterm),
                StopSignal::Hangup => shutdown.trigger(ShutdownCause::Sighup),
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
