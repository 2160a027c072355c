//! A workspace that is a git repository with one committed file, and the prompt that has a
//! real CLI edit that file with its own shell tool: what isolated runs are checked against.

use std::path::Path;
use std::process::Command;

use cli_agent_engine::Agent;

/// The tracked file the agent edits, and its committed content.
pub const EDITED_FILE: &str = "notes.txt";
pub const ORIGINAL: &str = "original line\n";

/// `dir` made a git repository whose one commit holds [`EDITED_FILE`] as [`ORIGINAL`].
pub fn make_repo(dir: &Path) {
    std::fs::write(dir.join(EDITED_FILE), ORIGINAL).expect("write the tracked file");
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    git(dir, &["add", EDITED_FILE]);
    git(dir, &["commit", "--quiet", "--message", "the original"]);
}

/// Runs git in `dir` with no user or system configuration and a fixed identity.
fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("run git");
    assert!(
        status.success(),
        "git {args:?} in {}: {status}",
        dir.display()
    );
}

/// [`EDITED_FILE`]'s content once `agent` has edited it.
pub fn edited(agent: Agent) -> String {
    format!("edited by {agent}\n")
}

/// The mock's script for `agent`: its shell tool overwrites [`EDITED_FILE`] with
/// [`edited`]'s text, in the directory the CLI works in.
pub fn edit_prompt(agent: Agent) -> String {
    format!("RUN_SHELL: echo 'edited by {agent}' > {EDITED_FILE}")
}
