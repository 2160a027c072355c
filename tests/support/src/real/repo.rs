//! A workspace that is a git repository with one committed file, and the edits a real CLI is
//! scripted to make there with its own tools: what isolated runs are checked against.

use std::path::Path;
use std::process::Command;

use cli_agent_engine::Agent;
use serde_json::{Value, json};

/// The tracked file, and its committed content.
pub const TRACKED_FILE: &str = "notes.txt";
pub const ORIGINAL: &str = "original line\n";

/// `dir` made a git repository whose one commit holds [`TRACKED_FILE`] as [`ORIGINAL`].
pub fn make_repo(dir: &Path) {
    std::fs::write(dir.join(TRACKED_FILE), ORIGINAL).expect("write the tracked file");
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    git(dir, &["add", TRACKED_FILE]);
    git(dir, &["commit", "--quiet", "--message", "the original"]);
}

/// The message of the commit checked out in `dir`.
pub fn head_subject(dir: &Path) -> String {
    git(dir, &["log", "-1", "--format=%s"])
        .trim_end()
        .to_owned()
}

/// Runs git in `dir` with no user or system configuration and a fixed identity; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let identity = [
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.invalid",
    ];
    let output = Command::new("git")
        .args(identity)
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let place = dir.display();
    assert!(output.status.success(), "git {args:?} in {place}: {stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The message of the agent's commit, where it commits.
pub const AGENT_COMMIT: &str = "the agent";

/// One file's edit, as the mock scripts it and as changes, diffs and files then show it.
pub struct ScriptedEdit {
    /// The agent's prompt: the mock's script.
    pub prompt: String,
    /// The mock's name for the tool call it scripts (`scenario.name` in its log).
    pub scenario: &'static str,
    /// The agent commits the edit, with [`AGENT_COMMIT`] as its message.
    pub commits: bool,
    pub file: &'static str,
    /// Its content before (`None`: the edit adds it) and after.
    pub before: Option<&'static str>,
    pub after: String,
}

impl ScriptedEdit {
    /// `agent`'s shell tool overwrites [`TRACKED_FILE`]'s one line.
    pub fn by_shell(agent: Agent) -> Self {
        let after = format!("edited by {agent}");
        Self {
            prompt: format!("RUN_SHELL: echo '{after}' > {TRACKED_FILE}"),
            scenario: "shell_call",
            commits: false,
            file: TRACKED_FILE,
            before: Some(ORIGINAL),
            after: after + "\n",
        }
    }

    /// `agent`'s shell tool overwrites [`TRACKED_FILE`]'s line and commits it (where the CLI
    /// lets git write the repository: codex's sandbox keeps `.git` read-only).
    pub fn by_shell_commit(agent: Agent) -> Self {
        let mut edit = Self::by_shell(agent);
        edit.prompt.push_str(&format!(
            " && git add {TRACKED_FILE} && git -c user.name=Agent \
             -c user.email=agent@example.invalid commit --quiet --message '{AGENT_COMMIT}'"
        ));
        edit.commits = true;
        edit
    }

    /// `agent`'s own file tool (codex apply_patch, claude Write) adds a file of one line.
    pub fn by_file_tool(agent: Agent) -> Self {
        let file = "added.txt";
        let after = format!("written by {agent}");
        Self {
            prompt: format!("WRITE_FILE: {file} {after}"),
            scenario: "write_call",
            commits: false,
            file,
            before: None,
            after: after + "\n",
        }
    }

    /// Its entry in a result's `changes.files`.
    pub fn file_change(&self) -> Value {
        json!([{
            "path": self.file,
            "change": if self.before.is_some() { "modified" } else { "added" },
            "lines_added": 1,
            "lines_removed": u64::from(self.before.is_some()),
        }])
    }

    /// The lines of its unified diff that say what changed: headers, removals, additions.
    pub fn diff_lines(&self) -> Vec<String> {
        let old = self
            .before
            .map_or("/dev/null".to_owned(), |_| format!("a/{}", self.file));
        let mut lines = vec![format!("--- {old}"), format!("+++ b/{}", self.file)];
        lines.extend(self.before.map(|before| format!("-{}", before.trim_end())));
        lines.push(format!("+{}", self.after.trim_end()));
        lines
    }

    /// The file's content in `dir`, `None` when it is not there.
    pub fn content_in(&self, dir: &Path) -> Option<String> {
        std::fs::read_to_string(dir.join(self.file)).ok()
    }
}

/// The lines of `diff` that say what changed: headers, removals, additions.
pub fn changed_lines(diff: &str) -> Vec<&str> {
    diff.lines()
        .filter(|line| line.starts_with(['-', '+']))
        .collect()
}
