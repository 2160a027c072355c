//! MCP logging: the server's warnings and errors (about runs, the store, the sandbox, the
//! config) also go to the connected clients as `notifications/message`; stderr keeps
//! everything. A tracing layer hands each event at WARN or above, from this server's own
//! crates, to every client whose level lets it through.
//!
//! A session (stdio, or an HTTP session opened with `initialize`) hears warnings and errors
//! from its start and picks its level with `logging/setLevel`. A 2026-07-28 request has no
//! session: it hears only while it runs, and only if its `_meta` names a `logLevel`.
//! Sending never blocks the code that logged: each client has a bounded queue, and what does
//! not fit is dropped and counted.
#![allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577); the 2025-11-25 clients use it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use cli_agent_engine::redact::redact;
use rmcp::RoleServer;
use rmcp::model::{Extensions, LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RequestContext};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

use super::session::session_key;

/// A session's level until it sets one: warnings are what a person should hear about (a run
/// that lost its sandbox, a store that can't be written, a config key ignored) and are rare.
pub const DEFAULT_LEVEL: LoggingLevel = LoggingLevel::Warning;
/// The messages a client may have waiting before more are dropped.
const QUEUE: usize = 64;
/// The crates whose events go to clients: not the SDK's or the HTTP stack's, which log the
/// messages themselves (sending one would log again).
const OWN_TARGETS: [&str; 2] = ["cli_agent_mcp", "cli_agent_engine"];

/// The clients listening, by session.
#[derive(Default)]
struct Listeners {
    sinks: Mutex<HashMap<String, Arc<Sink>>>,
}

static LISTENERS: LazyLock<Listeners> = LazyLock::new(Listeners::default);

/// One client's level and queue.
struct Sink {
    level: AtomicU8,
    queue: mpsc::Sender<LoggingMessageNotificationParam>,
    dropped: AtomicU64,
    peer: Peer<RoleServer>,
}

impl Sink {
    /// A sink whose messages a task sends to `peer` in order, until the peer is gone.
    fn start(peer: Peer<RoleServer>, level: LoggingLevel) -> Arc<Self> {
        let (queue, mut waiting) = mpsc::channel(QUEUE);
        let sink = Arc::new(Self {
            level: AtomicU8::new(rank(level)),
            queue,
            dropped: AtomicU64::new(0),
            peer: peer.clone(),
        });
        let counts = Arc::downgrade(&sink);
        tokio::spawn(async move {
            while let Some(message) = waiting.recv().await {
                if peer.notify_logging_message(message).await.is_err() {
                    return;
                }
                let dropped = counts
                    .upgrade()
                    .map_or(0, |sink| sink.dropped.swap(0, Ordering::Relaxed));
                if dropped > 0
                    && peer
                        .notify_logging_message(dropped_note(dropped))
                        .await
                        .is_err()
                {
                    return;
                }
            }
        });
        sink
    }

    fn offer(&self, level: LoggingLevel, message: &LoggingMessageNotificationParam) {
        if rank(level) < self.level.load(Ordering::Relaxed) {
            return;
        }
        if self.queue.try_send(message.clone()).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn is_gone(&self) -> bool {
        self.peer.is_transport_closed() || self.queue.is_closed()
    }
}

fn dropped_note(count: u64) -> LoggingMessageNotificationParam {
    let text = format!("{count} log messages were dropped: the client read them too slowly");
    let mut note = LoggingMessageNotificationParam::new(LoggingLevel::Warning, text.into());
    note.logger = Some(env!("CARGO_CRATE_NAME").to_owned());
    note
}

impl Listeners {
    fn sinks(&self) -> MutexGuard<'_, HashMap<String, Arc<Sink>>> {
        // A panic while holding the lock leaves the map whole: keep using it.
        self.sinks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Listen for `key` at `level` (keeping its queue if it listens already). `keep_level`:
    /// a session already listening keeps the level it set (`notifications/initialized` may be
    /// handled after a `logging/setLevel` sent right behind it).
    fn listen(
        &self,
        key: String,
        peer: &Peer<RoleServer>,
        level: LoggingLevel,
        keep_level: bool,
    ) -> Arc<Sink> {
        let mut sinks = self.sinks();
        sinks.retain(|_, sink| !sink.is_gone());
        match sinks.get(&key) {
            Some(sink) => {
                if !keep_level {
                    sink.level.store(rank(level), Ordering::Relaxed);
                }
                sink.clone()
            }
            None => {
                let sink = Sink::start(peer.clone(), level);
                sinks.insert(key, sink.clone());
                sink
            }
        }
    }

    fn broadcast(&self, level: LoggingLevel, message: &LoggingMessageNotificationParam) {
        for sink in self.sinks().values() {
            sink.offer(level, message);
        }
    }
}

/// A session starts hearing warnings and errors (stdio, or an HTTP session after
/// `initialize`); a 2026-07-28 request has no session and hears nothing this way.
pub fn session_started(peer: &Peer<RoleServer>, extensions: &Extensions) {
    if peer.peer_info().is_some() {
        LISTENERS.listen(session_key(extensions), peer, DEFAULT_LEVEL, true);
    }
}

/// `logging/setLevel`: the session hears messages at `level` and above from now on.
pub fn set_level(
    level: LoggingLevel,
    context: &RequestContext<RoleServer>,
) -> Result<(), rmcp::ErrorData> {
    if context.peer.peer_info().is_none() {
        // 2026-07-28 removed the method: a request asks with `_meta` logLevel instead.
        return Err(rmcp::ErrorData::method_not_found::<
            rmcp::model::SetLevelRequestMethod,
        >());
    }
    LISTENERS.listen(
        session_key(&context.extensions),
        &context.peer,
        level,
        false,
    );
    Ok(())
}

/// While a 2026-07-28 request that names a `logLevel` runs, it hears messages at that level;
/// the listening ends when the returned guard is dropped. `None` for a request in a session
/// (the session hears them) or one that named no level (it must hear nothing).
pub fn listen_during(context: &RequestContext<RoleServer>) -> Option<RequestListening> {
    if context.peer.peer_info().is_some() {
        return None;
    }
    let level = context.meta.log_level()?;
    // Not the JSON-RPC id: stateless clients each count from 1.
    static REQUESTS: AtomicU64 = AtomicU64::new(0);
    let key = format!("request {}", REQUESTS.fetch_add(1, Ordering::Relaxed));
    LISTENERS.listen(key.clone(), &context.peer, level, false);
    Some(RequestListening(key))
}

/// A request's listening, ended on drop.
pub struct RequestListening(String);

impl Drop for RequestListening {
    fn drop(&mut self) {
        LISTENERS.sinks().remove(&self.0);
    }
}

/// The level a client named for a request or its session, if it may hear logs at all: for
/// tools that log on the request's own behalf (the conformance fixtures).
#[cfg(feature = "conformance-fixtures")]
pub fn level_for(context: &RequestContext<RoleServer>) -> Option<LoggingLevel> {
    if context.peer.peer_info().is_none() {
        return context.meta.log_level();
    }
    let sinks = LISTENERS.sinks();
    let sink = sinks.get(&session_key(&context.extensions))?;
    Some(level_of(sink.level.load(Ordering::Relaxed)))
}

/// Whether `level` passes a client's `threshold`.
#[cfg(any(test, feature = "conformance-fixtures"))]
pub fn passes(level: LoggingLevel, threshold: LoggingLevel) -> bool {
    rank(level) >= rank(threshold)
}

const LEVELS: [LoggingLevel; 8] = [
    LoggingLevel::Debug,
    LoggingLevel::Info,
    LoggingLevel::Notice,
    LoggingLevel::Warning,
    LoggingLevel::Error,
    LoggingLevel::Critical,
    LoggingLevel::Alert,
    LoggingLevel::Emergency,
];

fn rank(level: LoggingLevel) -> u8 {
    LEVELS.iter().position(|known| *known == level).unwrap_or(0) as u8
}

#[cfg(any(test, feature = "conformance-fixtures"))]
fn level_of(rank: u8) -> LoggingLevel {
    LEVELS
        .get(usize::from(rank))
        .copied()
        .unwrap_or(DEFAULT_LEVEL)
}

/// The tracing layer that hands this server's warnings and errors to the listening clients.
pub struct ClientLogLayer;

impl<S: Subscriber> Layer<S> for ClientLogLayer {
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let meta = event.metadata();
        let level = match *meta.level() {
            Level::ERROR => LoggingLevel::Error,
            Level::WARN => LoggingLevel::Warning,
            _ => return,
        };
        if !OWN_TARGETS.iter().any(|own| meta.target().starts_with(own)) {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut message = LoggingMessageNotificationParam::new(level, Value::Object(fields.0));
        message.logger = Some(meta.target().to_owned());
        LISTENERS.broadcast(level, &message);
    }
}

/// An event's message and fields as JSON, secrets masked as in the log lines.
#[derive(Default)]
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .insert(field.name().to_owned(), redact(value).into_owned().into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), value.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_rank_from_debug_to_emergency() {
        assert!(passes(LoggingLevel::Error, LoggingLevel::Warning));
        assert!(passes(LoggingLevel::Warning, LoggingLevel::Warning));
        assert!(!passes(LoggingLevel::Warning, LoggingLevel::Error));
        assert!(passes(LoggingLevel::Info, LoggingLevel::Debug));
        assert_eq!(
            level_of(rank(LoggingLevel::Critical)),
            LoggingLevel::Critical
        );
    }

    #[test]
    fn an_events_fields_are_masked_like_the_log_lines() {
        let captured = Arc::new(Mutex::new(Map::new()));
        struct Capture(Arc<Mutex<Map<String, Value>>>);
        impl<S: Subscriber> Layer<S> for Capture {
            fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
                let mut fields = Fields::default();
                event.record(&mut fields);
                *self.0.lock().expect("captured") = fields.0;
            }
        }
        use tracing_subscriber::layer::SubscriberExt;
        let subscriber = tracing_subscriber::registry().with(Capture(captured.clone()));
        let key = "sk-ant-api03-Xq7dK2mN9pL4vR8sT1wY6zB3cF5gH0jA";
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(
                stderr = key,
                code = 3,
                "the CLI said ANTHROPIC_API_KEY={key}"
            );
        });
        let fields = Value::Object(captured.lock().expect("captured").clone());
        let text = fields.to_string();
        assert!(!text.contains("Xq7dK2mN9"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
        assert_eq!(fields["code"], 3);
    }
}
