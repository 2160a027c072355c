//! codex's `exec --json` events (tests/fixtures/captures/codex): `thread.started` with the
//! thread id, `turn.started`, `item.completed` items, `turn.completed` with the usage. One
//! compact JSON object per line, flushed at once, so a reader sees each event as it happens.

use std::hash::{BuildHasher, Hasher};
use std::io::Write;

use serde_json::{Value, json};

/// The events of one run, in order.
pub struct Stream {
    thread_id: String,
    items: usize,
}

impl Stream {
    pub fn new(thread_id: String) -> Self {
        Self {
            thread_id,
            items: 0,
        }
    }

    pub fn started(&mut self) {
        emit(&json!({"type": "thread.started", "thread_id": self.thread_id}));
        emit(&json!({"type": "turn.started"}));
    }

    pub fn reasoning(&mut self, text: &str) {
        self.item("reasoning", text);
    }

    pub fn answer(&mut self, text: &str) {
        self.item("agent_message", text);
    }

    pub fn completed(&mut self) {
        emit(&json!({"type": "turn.completed", "usage": {
            "input_tokens": 100, "cached_input_tokens": 20, "cache_write_input_tokens": 0,
            "output_tokens": 7, "reasoning_output_tokens": 3}}));
    }

    fn item(&mut self, kind: &str, text: &str) {
        let id = format!("item_{}", self.items);
        self.items += 1;
        emit(&json!({"type": "item.completed", "item": {"id": id, "type": kind, "text": text}}));
    }
}

/// One line on stdout. A closed stdout ends the fake quietly, as it ends codex.
fn emit(event: &Value) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{event}").and_then(|()| out.flush()).is_err() {
        std::process::exit(1);
    }
}

/// A UUID v7, as codex's thread ids: 48 bits of Unix milliseconds, then random bits (std's
/// per-process random hasher keys; no crate needed for a test's id).
pub fn uuid7() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let random = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(salt ^ u64::from(std::process::id()));
        h.finish()
    };
    let (a, b) = (random(millis), random(!millis));
    format!(
        "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
        millis >> 16,
        millis & 0xffff,
        a & 0xfff,
        0x8000 | (a >> 16) & 0x3fff,
        b & 0xffff_ffff_ffff,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid7_has_the_version_and_variant_and_differs_each_time() {
        let id = uuid7();
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('7'));
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"));
        assert_ne!(id, uuid7());
    }
}
