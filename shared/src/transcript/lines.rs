//! Lines of a CLI's stdout that gave no events, counted for the outcome's warnings: a new CLI
//! version that changes its output shows up there before it breaks a run.

use std::collections::BTreeMap;

use crate::agent::Agent;
use crate::dialect::LineIssue;

/// How many lines were skipped, and why.
#[derive(Debug, Default)]
pub(super) struct LineDiagnostics {
    not_json: u32,
    invalid_utf8: u32,
    unknown_types: BTreeMap<String, u32>,
    malformed: u32,
    first_malformed: Option<String>,
}

impl LineDiagnostics {
    pub(super) fn record(&mut self, issue: LineIssue) {
        match issue {
            LineIssue::NotJson => self.not_json += 1,
            LineIssue::UnknownType(name) => *self.unknown_types.entry(name).or_default() += 1,
            LineIssue::Malformed { event_type, reason } => {
                self.malformed += 1;
                self.first_malformed
                    .get_or_insert(format!("`{event_type}`: {reason}"));
            }
        }
    }

    pub(super) fn record_invalid_utf8(&mut self) {
        self.invalid_utf8 += 1;
    }

    /// One warning per kind of skipped line that occurred.
    pub(super) fn warnings(&self, agent: Agent, warnings: &mut Vec<String>) {
        if self.not_json > 0 {
            warnings.push(format!(
                "{} stdout line(s) of {agent} were not JSON and were skipped",
                self.not_json
            ));
        }
        if self.invalid_utf8 > 0 {
            warnings.push(format!(
                "{} line(s) of {agent} had invalid UTF-8, read with replacement characters",
                self.invalid_utf8
            ));
        }
        if !self.unknown_types.is_empty() {
            let types: Vec<String> = self
                .unknown_types
                .iter()
                .map(|(name, n)| format!("{name} ({n})"))
                .collect();
            warnings.push(format!(
                "unknown {agent} event types were ignored: {}",
                types.join(", ")
            ));
        }
        if let Some(first) = &self.first_malformed {
            warnings.push(format!(
                "{} {agent} event(s) had an unexpected shape and were skipped; first: {first}",
                self.malformed
            ));
        }
    }
}
