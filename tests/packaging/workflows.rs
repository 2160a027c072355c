//! The GitHub Actions workflows (every `.github/workflows/*.yml` or `*.yaml`, so one added later
//! is covered too) are valid and safe: each matches GitHub's workflow schema
//! (`check-jsonschema --builtin-schema vendor.github-workflows`) and zizmor's security audits
//! find nothing in them (`zizmor --offline`: template injection, unpinned actions, excessive
//! permissions, persisted credentials, ...). Both tools run offline, pinned, from the venv
//! that scripts/install-workflow-lint.sh installs into .tools/workflow-lint.
//!
//! Without the venv the tests are skipped with the command that installs it, unless
//! `CAM_TEST_REQUIRE_ALL=1` (CI), where that is a failure.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SETUP: &str = "scripts/install-workflow-lint.sh";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every workflow file, sorted; there is at least one.
fn workflows() -> Vec<PathBuf> {
    let dir = root().join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| {
            path.is_file()
                && path
                    .extension()
                    .is_some_and(|ext| ext == "yml" || ext == "yaml")
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no workflow in {}", dir.display());
    files
}

/// The installed `tool` from .tools/workflow-lint, or `None` once the test has been skipped.
fn linter(tool: &str) -> Option<PathBuf> {
    let path = root().join(".tools/workflow-lint/bin").join(tool);
    if path.is_file() {
        return Some(path);
    }
    common::skip_unless_required(&format!(
        "{tool} is not installed in .tools/workflow-lint: run `{SETUP}`"
    ));
    None
}

fn run(command: &mut Command) -> Output {
    command
        .current_dir(root())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"))
}

fn report(output: &Output) -> String {
    format!(
        "{}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn every_workflow_matches_the_github_workflow_schema() {
    let files = workflows();
    let Some(check_jsonschema) = linter("check-jsonschema") else {
        return;
    };
    let failures: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let output = run(Command::new(&check_jsonschema)
                .args(["--builtin-schema", "vendor.github-workflows"])
                .arg(file));
            (!output.status.success()).then(|| format!("{}: {}", file.display(), report(&output)))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "workflows that do not match GitHub's schema:\n{}",
        failures.join("\n")
    );
}

#[test]
fn zizmor_finds_no_security_problem_in_any_workflow() {
    let files = workflows();
    let Some(zizmor) = linter("zizmor") else {
        return;
    };
    let output = run(Command::new(&zizmor)
        .args(["--offline", "--no-progress", "--color=never"])
        .args(&files));
    assert!(
        output.status.success(),
        "zizmor --offline found problems in {files:?}: {}",
        report(&output)
    );
}
