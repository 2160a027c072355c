//! The fixtures' `requestState` (SEP-2322), sealed with rmcp's [`RequestStateCodec`] under a
//! key drawn at random when the server starts: a client may echo a state back but not forge
//! or alter one (the suite's `input-required-result-tampered-state` sends one altered). Each
//! state is bound to the fixture that sealed it and expires, so one fixture's state does not
//! open another's, and a kept one does not open after a restart.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{RequestStateCodec, SealOptions};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// How long a state may take to come back: well past any client's round trip.
const TTL: Duration = Duration::from_secs(600);
/// 256 bits: the HMAC's own size.
const KEY_BYTES: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum NoKey {
    #[error(
        "cannot draw the conformance fixtures' requestState key from the system's randomness \
         ({0}); serve without --conformance-fixtures, or on a system that has randomness"
    )]
    Random(getrandom::Error),
    #[error("rmcp refuses the conformance fixtures' requestState key: {0}")]
    Refused(rmcp::model::RequestStateError),
}

/// Seals and opens states under this process's key.
pub struct Sealer(RequestStateCodec);

impl Sealer {
    pub fn random() -> Result<Self, NoKey> {
        let mut key = [0u8; KEY_BYTES];
        getrandom::fill(&mut key).map_err(NoKey::Random)?;
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(NoKey::Refused)?;
        Ok(Self(codec))
    }

    /// `state` as an opaque string that only `owner` (a fixture's name) can open.
    pub fn seal<T: Serialize>(&self, state: &T, owner: &str) -> Result<String, ErrorData> {
        let options = SealOptions::new()
            .associated_data(owner.as_bytes())
            .ttl(TTL);
        self.0.seal_json_with(state, &options).map_err(|error| {
            ErrorData::internal_error(format!("cannot seal {owner}'s requestState: {error}"), None)
        })
    }

    /// The state `owner` sealed; anything else (altered, forged, another fixture's, expired)
    /// is the one invalid-params error, as rmcp asks: the detail would only help a forger.
    pub fn open<T: DeserializeOwned>(&self, sealed: &str, owner: &str) -> Result<T, ErrorData> {
        self.0
            .open_json_with(sealed, owner.as_bytes())
            .map_err(|error| {
                tracing::debug!(%error, owner, "a requestState did not open");
                ErrorData::invalid_params(
                    format!(
                        "the requestState failed its integrity check: send back the requestState \
                         of {owner}'s last InputRequiredResult unchanged, or call without one to \
                         start over"
                    ),
                    None,
                )
            })
    }
}
