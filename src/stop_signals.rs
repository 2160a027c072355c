//! The requests to stop that reach a command from outside, as each OS has them: on Unix
//! SIGINT, SIGTERM and SIGHUP; on Windows the console's Ctrl-C, Ctrl-Break, and its window
//! closing, the user logging off or the system shutting down. The commands decide what each
//! means (`mcp::signals` for the server, `run` and `dashboard` for theirs).

/// A request to stop, by what it asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT; Ctrl-C on Windows: a person at a terminal, usually "stop what you are doing".
    Interrupt,
    /// SIGTERM; Ctrl-Break or the system shutting down on Windows: "go away".
    Terminate,
    /// SIGHUP; the console closed or the user logging off on Windows: the terminal is gone.
    Hangup,
}

impl StopSignal {
    /// Its name on this OS, for messages.
    pub fn name(self) -> &'static str {
        match (self, cfg!(windows)) {
            (Self::Interrupt, false) => "SIGINT",
            (Self::Terminate, false) => "SIGTERM",
            (Self::Hangup, false) => "SIGHUP",
            (Self::Interrupt, true) => "Ctrl-C",
            (Self::Terminate, true) => "Ctrl-Break",
            (Self::Hangup, true) => "the console's closing",
        }
    }
}

pub use self::os::StopSignals;

#[cfg(unix)]
mod os {
    use tokio::signal::unix::{Signal, SignalKind, signal};

    use super::StopSignal;

    /// The handlers, installed: from then on these signals no longer end the process.
    pub struct StopSignals {
        interrupt: Signal,
        terminate: Signal,
        hangup: Option<Signal>,
    }

    impl StopSignals {
        /// Installs the handlers of SIGINT, SIGTERM and, when `hangup`, SIGHUP (left to end
        /// the process otherwise).
        pub fn install(hangup: bool) -> std::io::Result<Self> {
            Ok(Self {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
                hangup: hangup.then(|| signal(SignalKind::hangup())).transpose()?,
            })
        }

        /// The next request; `None` once none can come.
        pub async fn recv(&mut self) -> Option<StopSignal> {
            let hangup = &mut self.hangup;
            let hangup = async move {
                match hangup {
                    Some(hangup) => hangup.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                Some(()) = self.interrupt.recv() => Some(StopSignal::Interrupt),
                Some(()) = self.terminate.recv() => Some(StopSignal::Terminate),
                Some(()) = hangup => Some(StopSignal::Hangup),
                else => None,
            }
        }
    }
}

#[cfg(windows)]
mod os {
    use tokio::signal::windows::{CtrlBreak, CtrlC, CtrlClose, ctrl_break, ctrl_c, ctrl_close};

    use super::StopSignal;

    /// The console control handlers, installed. A process without a console (started by a
    /// desktop host) gets none of these events: stdin's end and the launcher's pipe stop it.
    /// (Logoff and shutdown events reach services only.)
    pub struct StopSignals {
        interrupt: CtrlC,
        terminate: CtrlBreak,
        close: Option<CtrlClose>,
    }

    impl StopSignals {
        /// Installs the handlers of Ctrl-C, Ctrl-Break and, when `hangup`, the console's
        /// closing (left to end the process otherwise).
        pub fn install(hangup: bool) -> std::io::Result<Self> {
            Ok(Self {
                interrupt: ctrl_c()?,
                terminate: ctrl_break()?,
                close: hangup.then(ctrl_close).transpose()?,
            })
        }

        /// The next request; `None` once none can come. Windows ends the process a few
        /// seconds after its console closes whatever it does: time to stop the runs, whose
        /// jobs die with the process anyway.
        pub async fn recv(&mut self) -> Option<StopSignal> {
            let close = &mut self.close;
            let close = async move {
                match close {
                    Some(close) => close.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                Some(()) = self.interrupt.recv() => Some(StopSignal::Interrupt),
                Some(()) = self.terminate.recv() => Some(StopSignal::Terminate),
                Some(()) = close => Some(StopSignal::Hangup),
                else => None,
            }
        }
    }
}
