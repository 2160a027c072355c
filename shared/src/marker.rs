//! The run marker: an environment entry that every process of one run inherits, so a sweep
//! finds the run's processes wherever they went (their own sessions, double forks), and the
//! guardian finds every run of a server it outlived. Plain data; the OS modules read it from
//! each process's environment.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that marks every process of one run, so a sweep can find the
/// run's processes wherever they went (their own sessions, double forks).
pub const MARKER_VAR: &str = "CAM_RUN_ID";

/// The marker value of one run: `<instance>-<n>`, where the instance is this process's pid
/// and start time, so a later process that reuses our pid cannot claim our runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunMarker(String);

impl RunMarker {
    /// A marker no other run of any process has.
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let seq = NEXT.fetch_add(1, Ordering::Relaxed);
        Self(format!("{}-{seq}", instance()))
    }

    /// `CAM_RUN_ID=<value>`, the entry as it appears in a process's environment.
    pub fn environ_entry(&self) -> Vec<u8> {
        format!("{MARKER_VAR}={}", self.0).into_bytes()
    }

    /// The value, `<instance>-<n>`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for RunMarker {
    fn default() -> Self {
        Self::new()
    }
}

/// This process's instance id: `<pid>.<start time in ns, hex>`, fixed at first use.
pub(crate) fn instance() -> &'static str {
    static INSTANCE: OnceLock<String> = OnceLock::new();
    INSTANCE.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}.{nanos:x}", std::process::id())
    })
}

/// The start of the marker entry of every run of one process instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerPrefix(String);

/// A guardian's argument that is not a run-marker prefix.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0:?} is not a run-marker prefix (expected {MARKER_VAR}=<pid>.<hex>-); \
     the guardian is started by cli-agent-mcp itself, not by hand"
)]
pub struct BadMarkerPrefix(String);

impl MarkerPrefix {
    /// The prefix of this process's runs.
    pub fn of_this_process() -> Self {
        Self(format!("{MARKER_VAR}={}-", instance()))
    }

    /// The prefix, `CAM_RUN_ID=<instance>-`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The process instance it names, `<pid>.<hex>`.
    pub fn instance(&self) -> &str {
        let value = self.0.strip_prefix(MARKER_VAR).unwrap_or(&self.0);
        value.trim_start_matches('=').trim_end_matches('-')
    }

    /// Whether an environment entry is the marker of one of its runs.
    pub fn matches(&self, entry: &[u8]) -> bool {
        entry.starts_with(self.0.as_bytes())
    }
}

impl std::str::FromStr for MarkerPrefix {
    type Err = BadMarkerPrefix;

    /// Only a whole instance prefix: a shorter one would match the runs of other servers.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadMarkerPrefix(text.to_owned());
        let instance = text
            .strip_prefix(MARKER_VAR)
            .and_then(|rest| rest.strip_prefix('='))
            .and_then(|rest| rest.strip_suffix('-'))
            .ok_or_else(bad)?;
        let (pid, nanos) = instance.split_once('.').ok_or_else(bad)?;
        let digits =
            |part: &str, radix| !part.is_empty() && part.chars().all(|c| c.is_digit(radix));
        if digits(pid, 10) && digits(nanos, 16) {
            Ok(Self(text.to_owned()))
        } else {
            Err(bad())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_of_this_process_carry_its_prefix() {
        let entry = RunMarker::new().environ_entry();
        assert!(MarkerPrefix::of_this_process().matches(&entry));
    }

    #[test]
    fn a_marker_prefix_must_name_a_whole_instance() {
        let ours = MarkerPrefix::of_this_process();
        assert_eq!(ours.as_str().parse::<MarkerPrefix>().ok(), Some(ours));
        for bad in [
            "",
            "CAM_RUN_ID=",
            "CAM_RUN_ID=-",
            "CAM_RUN_ID=12-",
            "CAM_RUN_ID=12.-",
            "OTHER=1.a-",
            "CAM_RUN_ID=1.ag-",
        ] {
            assert!(bad.parse::<MarkerPrefix>().is_err(), "{bad:?} accepted");
        }
    }
}
