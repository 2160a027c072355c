//! Issue 16 with real CLIs (codex, claude, copilot) against the mock model, through our MCP
//! server: under `isolation: "worktree"` and `workspace-write`, each CLI edits a tracked file
//! with its own shell tool in a worktree; the result's `changes` and `job_diff` show exactly
//! that edit, and the workspace stays as it was until `job_apply` brings the edit in. A CLI
//! that is not installed skips locally and fails in CI (see tests/real).

mod common;
mod mcp;
mod real;

use std::path::{Path, PathBuf};

use cli_agent_engine::{Agent, clis};
use mcp::{Server, is_error};
use real::repo::{EDITED_FILE, ORIGINAL, edit_prompt, edited, make_repo};
use real::{MockModel, Retries, Sandbox};
use serde_json::{Value, json};

/// The mock, a sandbox for `agent` whose workspace is a git repository, and a server that
/// runs the CLI there; `None` when the CLI is not installed.
async fn serve(agent: Agent) -> Option<(MockModel, Sandbox, Server)> {
    let bin = real::installed(agent)?;
    let mock = MockModel::start();
    let sandbox = Sandbox::new(agent, &bin, mock.port, Retries::Shortened);
    make_repo(&sandbox.workspace);
    let mut server = Server::builder()
        .env(&agent.env_var("BIN"), &sandbox.wrapper)
        .cwd(&sandbox.workspace)
        .spawn();
    server.initialize().await;
    Some((mock, sandbox, server))
}

/// `result`'s structured content, after checking that the call succeeded.
fn structured(result: &Value) -> &Value {
    assert!(!is_error(result), "{result:#}");
    &result["structuredContent"]
}

async fn an_isolated_edit_is_reviewed_then_applied(agent: Agent) {
    let Some((mock, sandbox, mut server)) = serve(agent).await else {
        return;
    };
    let workspace = &sandbox.workspace;
    let arguments = json!({
        "prompt": edit_prompt(agent),
        "permission": "workspace-write",
        "isolation": "worktree",
    });

    let result = server.call(agent.name(), arguments).await;

    let report = structured(&result);
    assert_eq!(report["status"], "completed", "{result:#}");
    assert!(
        mock.requests()
            .iter()
            .any(|request| request["scenario"]["name"] == "shell_call"),
        "the mock never scripted {agent}'s shell call: {:#?}",
        mock.requests()
    );
    let worktree = assert_one_line_changed(&report["changes"]);
    assert_eq!(read(&worktree.join(EDITED_FILE)), edited(agent));
    assert_eq!(
        read(&workspace.join(EDITED_FILE)),
        ORIGINAL,
        "the workspace was touched"
    );

    let job_id = report["job_id"].as_str().expect("a job id").to_owned();
    let diff = server.call("job_diff", json!({"job_id": job_id})).await;
    assert_diff_of_the_edit(&structured(&diff)["diff"], agent);

    let applied = server.call("job_apply", json!({"job_id": job_id})).await;
    assert_eq!(structured(&applied)["written"], true, "{applied:#}");
    assert_eq!(read(&workspace.join(EDITED_FILE)), edited(agent));
    assert!(
        !worktree.exists(),
        "the applied job's worktree is still there"
    );
    sandbox.assert_nothing_left();
}

/// `changes` reports [`EDITED_FILE`]'s one line replaced in a worktree; that worktree.
fn assert_one_line_changed(changes: &Value) -> PathBuf {
    assert_eq!(changes["isolation"], "worktree", "{changes:#}");
    assert_eq!(
        changes["files"],
        json!([{"path": EDITED_FILE, "change": "modified", "lines_added": 1, "lines_removed": 1}]),
        "{changes:#}"
    );
    let totals = ["files_changed", "lines_added", "lines_removed"].map(|key| &changes[key]);
    assert_eq!(totals, [&json!(1); 3], "{changes:#}");
    PathBuf::from(changes["worktree"].as_str().expect("the worktree kept"))
}

/// `diff` is [`EDITED_FILE`]'s diff and nothing else: its one line, replaced by `agent`'s.
fn assert_diff_of_the_edit(diff: &Value, agent: Agent) {
    let diff = diff.as_str().expect("a diff");
    let changed: Vec<&str> = diff
        .lines()
        .filter(|line| line.starts_with(['-', '+']))
        .collect();
    let expected = [
        format!("--- a/{EDITED_FILE}"),
        format!("+++ b/{EDITED_FILE}"),
        format!("-{}", ORIGINAL.trim_end()),
        format!("+{}", edited(agent).trim_end()),
    ];
    assert_eq!(changed, expected, "{diff}");
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap_or_else(|error| panic!("{}: {error}", file.display()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_edits_in_a_worktree() {
    an_isolated_edit_is_reviewed_then_applied(clis::CODEX).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_edits_in_a_worktree() {
    an_isolated_edit_is_reviewed_then_applied(clis::CLAUDE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_edits_in_a_worktree() {
    an_isolated_edit_is_reviewed_then_applied(clis::COPILOT).await;
}
