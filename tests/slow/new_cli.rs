//! A new CLI touches only its own module, its fixtures and one registry line:
//! `scripts/new-cli-check` adds a throwaway one in a temporary copy of the tree, builds it and
//! runs the tests that know every CLI, with the fake CLI. It builds, so it takes minutes.

use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn a_new_cli_needs_only_its_module_its_fixtures_and_the_registry_line() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/new-cli-check");
    let output = Command::new(&script)
        .stdin(Stdio::null())
        .output()
        .expect("run scripts/new-cli-check");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the throwaway CLI failed its build or the tests that know every CLI:\n{stdout}\n{stderr}"
    );
    let outside = stdout
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("outside: "))
        .unwrap_or_else(|| panic!("the script printed no `outside:` line:\n{stdout}"));
    assert_eq!(
        outside.split_whitespace().next(),
        Some("0"),
        "a new CLI had to touch these files outside its module and fixtures: {outside}"
    );
}
