//! The `requestState` of this server's `InputRequiredResult`s. The client echoes it back with
//! the person's answers, and whatever a client sends is untrusted, so a state is:
//! - sealed: an HMAC with a key only this process holds, so no client can make one up;
//! - bound to the call: the tool's name and its arguments are part of the seal, so a state is
//!   refused by any other call;
//! - single-use: the server keeps what the state stands for and gives it out once;
//! - short-lived: kept until its question lapses (`CAM_ASK_TIMEOUT_SECS`) and a while after,
//!   so a late retry is still told what became of it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rmcp::model::{JsonObject, RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// How long a state outlives its question's lapse.
const AFTER_LAPSE: Duration = Duration::from_secs(600);
/// The key's length: what HMAC-SHA256 takes in one block.
const KEY_BYTES: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum StatesError {
    #[error("no randomness for the key that seals input requests' state: {0}")]
    Random(getrandom::Error),
    #[error("the key that seals input requests' state is unusable: {0}")]
    Key(RequestStateError),
}

/// Every way a state is refused, told the same way: which one it was is for the log only.
#[derive(Debug, thiserror::Error)]
#[error(
    "requestState refused: it is not one this server gave for this tool with these arguments, \
     it was used already, or it is too old. Nothing ran for it. Call the tool again without \
     requestState and inputResponses to be asked anew (a job a call started runs on: \
     job_list shows it)"
)]
pub struct StateRefused;

/// What a state is bound to: the tool it was given for and that call's arguments.
pub struct Binding(Vec<u8>);

impl Binding {
    pub fn of(tool: &str, arguments: Option<&JsonObject>) -> Self {
        // serde_json's maps keep their keys sorted: the same arguments in another order, or
        // spaced otherwise, bind alike.
        let arguments = arguments
            .map(serde_json::to_vec)
            .transpose()
            .unwrap_or_default()
            .unwrap_or_default();
        let mut bound = Vec::with_capacity(tool.len() + 1 + arguments.len());
        bound.extend_from_slice(tool.as_bytes());
        bound.push(b'\n');
        bound.extend(arguments);
        Self(bound)
    }
}

/// The sealed part: which entry a state names, nothing else.
#[derive(Serialize, Deserialize)]
struct Sealed {
    id: u64,
}

/// The states this server gave out, each standing for a `T` until used or too old.
pub struct RequestStates<T> {
    codec: RequestStateCodec,
    kept: Mutex<HashMap<u64, Kept<T>>>,
    next: AtomicU64,
    /// How long the person has to answer.
    lapse: Duration,
}

struct Kept<T> {
    what: T,
    until: Instant,
}

impl<T> RequestStates<T> {
    /// States for questions that lapse after `lapse`, sealed with a fresh random key.
    pub fn new(lapse: Duration) -> Result<Self, StatesError> {
        let mut key = [0u8; KEY_BYTES];
        getrandom::fill(&mut key).map_err(StatesError::Random)?;
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(StatesError::Key)?;
        Ok(Self {
            codec,
            kept: Mutex::default(),
            next: AtomicU64::new(0),
            lapse,
        })
    }

    /// How long the person has to answer a question carried by a state.
    pub fn lapse(&self) -> Duration {
        self.lapse
    }

    /// A state standing for `what`, for the retry of the call `binding`, and its entry's id.
    pub fn seal(&self, binding: &Binding, what: T) -> (String, u64) {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let now = Instant::now();
        let mut kept = self.lock();
        kept.retain(|_, entry| entry.until > now);
        let until = now + self.lapse + AFTER_LAPSE;
        kept.insert(id, Kept { what, until });
        drop(kept);
        let options = SealOptions::new()
            .associated_data(&binding.0)
            .ttl(self.lapse + AFTER_LAPSE);
        // The payload is a number: encoding it cannot fail.
        let payload = serde_json::to_vec(&Sealed { id }).unwrap_or_default();
        (self.codec.seal_with(&payload, &options), id)
    }

    /// What `state` stands for, given out once, if this server sealed it for `binding`.
    pub fn open(&self, binding: &Binding, state: &str) -> Result<T, StateRefused> {
        let sealed: Sealed = self
            .codec
            .open_json_with(state, &binding.0)
            .map_err(|error| {
                tracing::info!(%error, "a requestState failed its check");
                StateRefused
            })?;
        self.take(sealed.id).ok_or_else(|| {
            tracing::info!(
                id = sealed.id,
                "a requestState was used already or is too old"
            );
            StateRefused
        })
    }

    /// Entry `id`'s `T`, taken out: a state naming it is refused from now on.
    pub fn take(&self, id: u64) -> Option<T> {
        let entry = self.lock().remove(&id)?;
        (entry.until > Instant::now()).then_some(entry.what)
    }

    /// Put `what` back under `id`, for a late retry to be told: kept as long after now as an
    /// entry is kept after its question lapsed.
    pub fn keep(&self, id: u64, what: T) {
        let until = Instant::now() + AFTER_LAPSE;
        self.lock().insert(id, Kept { what, until });
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Kept<T>>> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn arguments(text: &str) -> JsonObject {
        serde_json::from_str(text).expect("an object")
    }

    fn states() -> RequestStates<&'static str> {
        RequestStates::new(Duration::from_secs(60)).expect("states")
    }

    #[test]
    fn a_state_opens_once_for_its_own_call_whatever_the_order_of_its_arguments() {
        let states = states();
        let asked = Binding::of(
            "codex",
            Some(&arguments(r#"{"prompt":"p","permission":"x"}"#)),
        );
        let (state, _) = states.seal(&asked, "the call");
        let same = Binding::of(
            "codex",
            Some(&arguments(r#"{ "permission": "x", "prompt": "p" }"#)),
        );
        assert_eq!(states.open(&same, &state).ok(), Some("the call"));
        assert!(states.open(&same, &state).is_err(), "used once only");
    }

    #[test]
    fn a_state_is_refused_for_another_tool_other_arguments_or_when_tampered_with() {
        let states = states();
        let asked = Binding::of("codex", Some(&arguments(r#"{"prompt":"p"}"#)));
        let (state, _) = states.seal(&asked, "the call");
        let other_tool = Binding::of("claude", Some(&arguments(r#"{"prompt":"p"}"#)));
        let other_arguments = Binding::of("codex", Some(&arguments(r#"{"prompt":"q"}"#)));
        assert!(states.open(&other_tool, &state).is_err());
        assert!(states.open(&other_arguments, &state).is_err());
        let mut tampered = state.clone().into_bytes();
        let middle = tampered.len() / 2;
        tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).expect("ASCII");
        assert!(states.open(&asked, &tampered).is_err());
        let foreign = states_with_another_key(&asked);
        assert!(states.open(&asked, &foreign).is_err());
        assert_eq!(states.open(&asked, &state).ok(), Some("the call"));
    }

    fn states_with_another_key(binding: &Binding) -> String {
        states().seal(binding, "elsewhere").0
    }

    #[test]
    fn a_state_taken_by_its_id_is_refused_and_one_kept_again_opens() {
        let states = states();
        let asked = Binding::of("codex", None);
        let (state, id) = states.seal(&asked, "asked");
        assert_eq!(states.take(id), Some("asked"));
        states.keep(id, "lapsed");
        assert_eq!(states.open(&asked, &state).ok(), Some("lapsed"));
        assert!(states.open(&asked, &json!("x").to_string()).is_err());
    }
}
