//! The calls in flight, and the server-wide stops that cancel them.
//!
//! A call cancelled by the client needs nothing from here: rmcp fires its token and drops its
//! response. The server's own stops (SIGINT, shutdown) go through this registry, because each
//! such call is still owed a response that says why it stopped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio_util::sync::CancellationToken;

/// Why the server stopped a call that the client did not cancel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerStop {
    /// SIGINT cancels the active calls; the server keeps serving.
    Sigint,
    /// The server is going away.
    Shutdown(ShutdownCause),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownCause {
    StdinClosed,
    Sigterm,
    Sighup,
    Sigint,
    /// The MCP session ended on its own (a transport error, a broken handshake).
    SessionEnded,
}

impl ServerStop {
    /// How a call's result names the stop.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Sigint => "cancelled by SIGINT; the server carries on",
            Self::Shutdown(ShutdownCause::StdinClosed) => {
                "cancelled: the client closed the connection and the server is shutting down"
            }
            Self::Shutdown(ShutdownCause::Sigterm) => "cancelled: the server got SIGTERM",
            Self::Shutdown(ShutdownCause::Sighup) => "cancelled: the server got SIGHUP",
            Self::Shutdown(ShutdownCause::Sigint) => {
                "cancelled: the server got SIGINT and is shutting down"
            }
            Self::Shutdown(ShutdownCause::SessionEnded) => {
                "cancelled: the MCP session ended and the server is shutting down"
            }
        }
    }
}

/// The registry of active calls. Cheap to clone; every clone is the same registry.
#[derive(Clone, Default)]
pub struct ActiveCalls {
    inner: Arc<Mutex<Registry>>,
}

#[derive(Default)]
struct Registry {
    next_id: u64,
    calls: HashMap<u64, Entry>,
}

struct Entry {
    cancel: CancellationToken,
    stop: Arc<OnceLock<ServerStop>>,
}

impl ActiveCalls {
    /// Track a call whose run stops when `cancel` fires, until the guard is dropped.
    pub fn register(&self, cancel: CancellationToken) -> CallGuard {
        let stop = Arc::new(OnceLock::new());
        let mut registry = self.lock();
        let id = registry.next_id;
        registry.next_id += 1;
        registry.calls.insert(
            id,
            Entry {
                cancel,
                stop: stop.clone(),
            },
        );
        CallGuard {
            calls: self.clone(),
            id,
            stop,
        }
    }

    /// Cancel every active call for `reason`; returns how many there were. A call keeps the
    /// first reason it was given.
    pub fn stop_all(&self, reason: ServerStop) -> usize {
        let registry = self.lock();
        for entry in registry.calls.values() {
            let _ = entry.stop.set(reason);
            entry.cancel.cancel();
        }
        registry.calls.len()
    }

    pub fn count(&self) -> usize {
        self.lock().calls.len()
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        // The registry stays consistent even if a holder panicked: every change is one call.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// An active call's place in the registry; dropping it ends the call's registration.
pub struct CallGuard {
    calls: ActiveCalls,
    id: u64,
    stop: Arc<OnceLock<ServerStop>>,
}

impl CallGuard {
    /// Why the server stopped this call, if it did.
    pub fn server_stop(&self) -> Option<ServerStop> {
        self.stop.get().copied()
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.calls.lock().calls.remove(&self.id);
    }
}

/// The server-wide shutdown: once triggered, every run is cancelled and no new one starts.
#[derive(Clone)]
pub struct Shutdown {
    token: CancellationToken,
    calls: ActiveCalls,
}

impl Shutdown {
    pub fn new(calls: ActiveCalls) -> Self {
        Self {
            token: CancellationToken::new(),
            calls,
        }
    }

    /// Start the shutdown; the calls keep the first cause they are given.
    pub fn trigger(&self, cause: ShutdownCause) {
        if !self.token.is_cancelled() {
            tracing::info!(?cause, "shutting down");
        }
        self.calls.stop_all(ServerStop::Shutdown(cause));
        self.token.cancel();
    }

    pub fn is_triggered(&self) -> bool {
        self.token.is_cancelled()
    }

    pub async fn triggered(&self) {
        self.token.cancelled().await;
    }

    /// A token for one run: cancelled by the shutdown, or on its own.
    pub fn run_token(&self) -> CancellationToken {
        self.token.child_token()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_all_cancels_every_call_and_keeps_the_first_reason() {
        let calls = ActiveCalls::default();
        let (a, b) = (CancellationToken::new(), CancellationToken::new());
        let guard_a = calls.register(a.clone());
        let guard_b = calls.register(b.clone());
        assert_eq!(calls.stop_all(ServerStop::Sigint), 2);
        assert!(a.is_cancelled() && b.is_cancelled());
        calls.stop_all(ServerStop::Shutdown(ShutdownCause::Sigterm));
        assert_eq!(guard_a.server_stop(), Some(ServerStop::Sigint));
        drop(guard_a);
        assert_eq!(calls.count(), 1);
        drop(guard_b);
        assert_eq!(calls.stop_all(ServerStop::Sigint), 0);
    }

    #[test]
    fn a_shutdown_stops_the_calls_and_every_later_run_token() {
        let calls = ActiveCalls::default();
        let shutdown = Shutdown::new(calls.clone());
        let run = shutdown.run_token();
        let guard = calls.register(run.clone());
        shutdown.trigger(ShutdownCause::StdinClosed);
        shutdown.trigger(ShutdownCause::Sigterm);
        assert!(run.is_cancelled() && shutdown.run_token().is_cancelled());
        assert_eq!(
            guard.server_stop(),
            Some(ServerStop::Shutdown(ShutdownCause::StdinClosed))
        );
    }
}
