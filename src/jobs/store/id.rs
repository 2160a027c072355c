//! Job ids: short, unguessable, never reused, and never a pid (pids come round again).

use std::fmt;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

const PREFIX: &str = "job_";
/// RFC 4648 base32, lowercased: no padding, nothing to confuse in a URL or a shell.
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
/// 16 characters of 5 bits: 80 random bits.
const CHARS: usize = 16;

/// A job's id: `job_` and 16 lowercase base32 characters (80 random bits).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct JobId(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "`{given}` is not a job id: a job id is `job_` followed by 16 characters from a-z and 2-7, \
     e.g. job_3k7qmz2xw4abcdef; take it from a background call's result, from job_list, or from \
     `cli-agent-mcp jobs`"
)]
pub struct BadJobId {
    given: String,
}

impl JobId {
    pub fn random() -> Self {
        let mut bytes = [0u8; 10];
        if let Err(error) = getrandom::fill(&mut bytes) {
            // Only where the kernel has no randomness at all: still unique, no longer secret.
            tracing::warn!(%error, "no randomness for a job id; using the clock");
            bytes = clock_bytes();
        }
        Self(format!("{PREFIX}{}", base32(&bytes)))
    }

    /// An id read back from the store, which only ever holds ids made by [`JobId::random`].
    pub(super) fn stored(id: String) -> Self {
        Self(id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// 80 bits as 16 base32 characters, most significant first.
fn base32(bytes: &[u8; 10]) -> String {
    let bits = bytes
        .iter()
        .fold(0u128, |acc, &byte| (acc << 8) | u128::from(byte));
    (0..CHARS)
        .rev()
        .map(|digit| char::from(ALPHABET[((bits >> (digit * 5)) & 31) as usize]))
        .collect()
}

/// The clock's nanoseconds, the pid and a counter: unique within this machine.
fn clock_bytes() -> [u8; 10] {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let mut bytes = [0u8; 10];
    bytes[..8].copy_from_slice(&(nanos ^ (u64::from(std::process::id()) << 40)).to_be_bytes());
    bytes[8..].copy_from_slice(&NEXT.fetch_add(1, Ordering::Relaxed).to_be_bytes());
    bytes
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for JobId {
    type Err = BadJobId;

    fn from_str(given: &str) -> Result<Self, Self::Err> {
        let well_formed = given.strip_prefix(PREFIX).is_some_and(|code| {
            code.len() == CHARS && code.bytes().all(|byte| ALPHABET.contains(&byte))
        });
        if well_formed {
            Ok(Self(given.to_owned()))
        } else {
            Err(BadJobId {
                given: given.chars().take(80).collect(),
            })
        }
    }
}

/// A string of the id's shape, so a host sees what an id looks like.
impl JsonSchema for JobId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JobId".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^job_[a-z2-7]{16}$",
            "description": "A job id, as a background call, job_list or `cli-agent-mcp jobs` gives it"
        })
    }
}

impl TryFrom<String> for JobId {
    type Error = BadJobId;

    fn try_from(given: String) -> Result<Self, Self::Error> {
        given.parse()
    }
}

impl From<JobId> for String {
    fn from(id: JobId) -> Self {
        id.0
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn random_ids_have_the_documented_shape_and_parse_back() {
        let id = JobId::random();
        assert_eq!(id.as_str().len(), PREFIX.len() + CHARS);
        assert_eq!(id.as_str().parse::<JobId>(), Ok(id.clone()));
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            format!("\"{}\"", id.as_str())
        );
    }

    #[test]
    fn random_ids_do_not_repeat_and_use_every_position() {
        let ids: HashSet<JobId> = (0..10_000).map(|_| JobId::random()).collect();
        assert_eq!(ids.len(), 10_000);
        // Random bits, not a counter: every position takes many values across the sample.
        for position in PREFIX.len()..PREFIX.len() + CHARS {
            let seen: HashSet<u8> = ids
                .iter()
                .map(|id| id.as_str().as_bytes()[position])
                .collect();
            assert!(seen.len() > 16, "position {position}: {seen:?}");
        }
    }

    #[test]
    fn malformed_ids_are_refused_with_what_an_id_looks_like() {
        for bad in [
            "",
            "12345",
            "job_",
            "job_ABCDEFGHIJKLMNOP",
            "job_abcdefghijklmno1",
            "job_abcdefghijklmnopq",
            "run_abcdefghijklmnop",
        ] {
            let error = bad.parse::<JobId>().unwrap_err().to_string();
            assert!(error.contains("followed by 16 characters"), "{error}");
            assert!(error.contains("job_list"), "{error}");
        }
        assert!(serde_json::from_str::<JobId>("\"job_x\"").is_err());
    }

    #[test]
    fn the_schema_pattern_accepts_exactly_what_parses() {
        let schema = schemars::schema_for!(JobId);
        let pattern = regex::Regex::new(schema.get("pattern").unwrap().as_str().unwrap()).unwrap();
        assert!(pattern.is_match(JobId::random().as_str()));
        for bad in ["job_x", "job_ABCDEFGHIJKLMNOP", "job_abcdefghijklmno1"] {
            assert!(
                !pattern.is_match(bad) && bad.parse::<JobId>().is_err(),
                "{bad}"
            );
        }
    }
}
