//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/conformance/package.json, installed with a Node 22 by scripts/install-conformance.sh)
//! against the real binary on `serve --http`, with the suite's fixtures switched on
//! (`--conformance-fixtures`, in a build with the `conformance-fixtures` feature, which this
//! test binary requires: `cargo test --test conformance --features conformance-fixtures`).
//! Two runs: the active suite at 2025-11-25 (the `initialize` era, with sessions) and exactly
//! what the 2026-07-28 revision requires (stateless). Each passes only if every failure is
//! listed, with its reason, in tests/conformance/expected-failures.yml and no listed one passes.
//!
//! Each run's counts are printed (stderr): the checks passed and failed, and the failures the
//! baseline expected, which must be exactly the entries that apply to the run (scenarios it
//! ran and scores: all of the active suite; the `server` list of the revision's requirements).
//! The scenarios a revision's run runs without scoring them (the tasks extension's, the
//! pending ones), to which the runner applies no baseline, must pass too unless listed: the
//! failing ones must be exactly those the baseline names.
//!
//! Without the suite installed the test is skipped with the command that installs it, unless
//! `CAM_TEST_REQUIRE_ALL=1` (CI), where that is a failure.

use crate::common;
use crate::mcp;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::temp_dir;
use mcp::Server;
use tokio::process::Command;

const SETUP: &str = "scripts/install-conformance.sh";

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/conformance/node_modules")
}

/// The suite's Node and its entry point, if installed.
fn suite() -> Option<(PathBuf, PathBuf)> {
    let bin = suite_dir().join(".bin");
    let (node, conformance) = (bin.join("node"), bin.join("conformance"));
    (node.exists() && conformance.exists()).then_some((node, conformance))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_conformance_suite_passes_but_for_the_explained_expected_failures() {
    let Some((node, conformance)) = suite() else {
        common::skip_unless_required(&format!(
            "the MCP conformance suite is not installed: run `{SETUP}`"
        ));
        return;
    };
    let expected =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/expected-failures.yml");
    let entries = server_list(&std::fs::read_to_string(&expected).expect("the expected failures"));
    let (server, url) = Server::builder()
        .arg("--conformance-fixtures")
        .spawn_http()
        .await;
    for selection in [
        ["--spec-version", "2025-11-25"],
        ["--requirements", "2026-07-28"],
    ] {
        let results = temp_dir("conformance-results");
        let output = Command::new(&node)
            .arg(&conformance)
            .args(["server", "--url", &url])
            .args(selection)
            .arg("--expected-failures")
            .arg(&expected)
            .arg("--output-dir")
            .arg(results.path())
            .kill_on_drop(true)
            .output()
            .await
            .expect("run the conformance suite");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let run = Run::read(&stdout);
        let scored = run.scored(selection);
        let applying = applying_entries(&entries, &scored);
        let not_scored = failed_in(results.path(), run.ran.difference(&scored));
        eprintln!(
            "conformance {}: {}; {} expected failures ({} of the {} entries apply); \
             {} scenarios run but not scored, {} of them failing",
            selection.join(" "),
            run.total,
            run.expected_failures.len(),
            applying.len(),
            entries.len(),
            not_scored.len(),
            not_scored.values().filter(|failed| **failed).count()
        );
        assert!(
            output.status.success(),
            "conformance {}: {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}\n--- server ---\n{}",
            selection.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr),
            server.stderr()
        );
        assert_eq!(run.expected_failures, applying, "{stdout}");
        let (failing, listed) = not_scored_failures(&not_scored, &entries);
        assert_eq!(
            failing, listed,
            "a scenario the run does not score (the tasks extension's, a pending one) must \
             pass unless expected-failures.yml lists it, and a listed one must fail:\n{stdout}"
        );
    }
}

/// What one run of the suite printed.
struct Run {
    /// Its `Total: N passed, M failed` line (checks).
    total: String,
    /// The scenarios it ran.
    ran: BTreeSet<String>,
    /// The baseline entries it matched with a failure (`  ~ entry`).
    expected_failures: BTreeSet<String>,
}

impl Run {
    fn read(stdout: &str) -> Self {
        let after = |prefix: &str| {
            stdout
                .lines()
                .filter_map(|line| line.strip_prefix(prefix))
                .map(|rest| rest.trim().trim_end_matches(" ===").to_owned())
                .collect()
        };
        Self {
            total: stdout
                .lines()
                .find(|line| line.starts_with("Total:"))
                .unwrap_or("no total")
                .to_owned(),
            ran: after("=== Running scenario: "),
            expected_failures: after("  ~ "),
        }
    }

    /// The scenarios of this run the baseline is checked against: every one of the active
    /// suite; of a revision's requirements, those it requires of a server (not `not_scored`).
    fn scored(&self, selection: [&str; 2]) -> BTreeSet<String> {
        match selection {
            ["--requirements", revision] => {
                let file = suite_dir()
                    .join("@modelcontextprotocol/conformance/requirements")
                    .join(format!("{revision}.yaml"));
                let yaml = std::fs::read_to_string(&file).expect("the suite's requirements");
                let required: BTreeSet<String> = server_list(&yaml).into_iter().collect();
                self.ran.intersection(&required).cloned().collect()
            }
            _ => self.ran.clone(),
        }
    }
}

/// Whether each of `scenarios` failed (a check's status FAILURE or WARNING, as the baseline
/// counts them), read from the run's results: `server-SCENARIO-TIMESTAMP/checks.json`.
fn failed_in<'a>(
    results: &Path,
    scenarios: impl Iterator<Item = &'a String>,
) -> BTreeMap<String, bool> {
    let timestamped = regex::Regex::new(r"^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$").expect("regex");
    let mut failed: BTreeMap<String, bool> = scenarios.map(|name| (name.clone(), false)).collect();
    for dir in std::fs::read_dir(results)
        .expect("the results directory")
        .flatten()
    {
        let name = dir.file_name().to_string_lossy().into_owned();
        let Some(scenario) = timestamped.captures(&name).map(|found| found[1].to_owned()) else {
            continue;
        };
        let Some(slot) = failed.get_mut(&scenario) else {
            continue;
        };
        let checks = std::fs::read_to_string(dir.path().join("checks.json")).expect("checks.json");
        let checks: Vec<serde_json::Value> = serde_json::from_str(&checks).expect("checks");
        *slot |= checks
            .iter()
            .any(|check| matches!(check["status"].as_str(), Some("FAILURE" | "WARNING")));
    }
    failed
}

/// Of the scenarios run without scoring, those that failed and those the baseline lists (an
/// entry or one of its checks): the same when every failure is explained and none is stale.
fn not_scored_failures(
    not_scored: &BTreeMap<String, bool>,
    entries: &[String],
) -> (BTreeSet<String>, BTreeSet<String>) {
    let failing = (not_scored.iter())
        .filter(|(_, failed)| **failed)
        .map(|(scenario, _)| scenario.clone())
        .collect();
    let listed = entries
        .iter()
        .filter_map(|entry| entry.split(':').next())
        .filter(|scenario| not_scored.contains_key(*scenario))
        .map(str::to_owned)
        .collect();
    (failing, listed)
}

/// The entries (`scenario` or `scenario:check`) whose scenario is among `scored`.
fn applying_entries(entries: &[String], scored: &BTreeSet<String>) -> BTreeSet<String> {
    entries
        .iter()
        .filter(|entry| scored.contains(entry.split(':').next().unwrap_or_default()))
        .cloned()
        .collect()
}

/// The items of the top-level `server:` list of a YAML file of the suite's (`  - item  # why`).
fn server_list(yaml: &str) -> Vec<String> {
    yaml.lines()
        .skip_while(|line| *line != "server:")
        .skip(1)
        .take_while(|line| !line.starts_with(|c: char| c.is_ascii_alphanumeric()))
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .map(|item| item.split('#').next().unwrap_or_default().trim().to_owned())
        .collect()
}
