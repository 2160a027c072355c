//! Issue 16 with real CLIs (codex, claude, copilot) against the mock model, through our MCP
//! server: under `isolation: "worktree"` and `workspace-write`, each CLI edits a tracked file
//! with its own shell tool in a worktree (codex and claude also add one with their file tool,
//! and claude commits its edit); the result's `changes` and `job_diff` show exactly that edit,
//! and the workspace stays as it was until `job_apply` brings the edit in. A CLI that is not
//! installed skips locally and fails in CI (see tests/real).

use crate::mcp;
use crate::real;

use std::path::PathBuf;

use cli_agent_engine::Agent;
use cli_agent_engine::clis::{CLAUDE, CODEX, COPILOT};
use mcp::{Server, is_error};
use real::repo::{AGENT_COMMIT, ScriptedEdit, changed_lines, head_subject, make_repo};
use real::{MockModel, Retries, Sandbox};
use serde_json::{Value, json};

/// The mock, a sandbox for `agent` whose workspace is a git repository, and a server that
/// runs the CLI there; `None` when the CLI is not installed.
async fn serve(agent: Agent) -> Option<(MockModel, Sandbox, Server)> {
    let bin = real::installed(agent)?;
    let mock = MockModel::start();
    let sandbox = Sandbox::new(agent, &bin, mock.port, Retries::Shortened);
    make_repo(&sandbox.workspace);
    let builder = Server::builder();
    let builder = sandbox
        .env()
        .iter()
        .fold(builder, |builder, (key, value)| builder.env(key, value));
    let mut server = builder
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

async fn an_isolated_edit_is_reviewed_then_applied(agent: Agent, edit: ScriptedEdit) {
    let Some((mock, sandbox, mut server)) = serve(agent).await else {
        return;
    };
    let workspace = &sandbox.workspace;
    let arguments = json!({
        "prompt": edit.prompt,
        "permission": "workspace-write",
        "isolation": "worktree",
    });

    let result = server.call(agent.name(), arguments).await;

    let report = structured(&result);
    assert_eq!(report["status"], "completed", "{result:#}");
    assert_tool_called(&mock, agent, &edit);
    let worktree = assert_changes(&report["changes"], &edit);
    assert_eq!(edit.content_in(&worktree), Some(edit.after.clone()));
    if edit.commits {
        assert_eq!(
            head_subject(&worktree),
            AGENT_COMMIT,
            "the agent did not commit"
        );
    }
    let before = edit.before.map(str::to_owned);
    assert_eq!(
        edit.content_in(workspace),
        before,
        "the workspace was touched"
    );

    let job_id = report["job_id"].as_str().expect("a job id").to_owned();
    let diff = server.call("job_diff", json!({"job_id": job_id})).await;
    let diff = structured(&diff)["diff"]
        .as_str()
        .expect("a diff")
        .to_owned();
    assert_eq!(changed_lines(&diff), edit.diff_lines(), "{diff}");

    let applied = server.call("job_apply", json!({"job_id": job_id})).await;
    assert_eq!(structured(&applied)["written"], true, "{applied:#}");
    assert_eq!(edit.content_in(workspace), Some(edit.after.clone()));
    assert!(
        !worktree.exists(),
        "the applied job's worktree is still there"
    );
    sandbox.assert_nothing_left();
}

/// The mock scripted `edit`'s call of one of `agent`'s own tools.
fn assert_tool_called(mock: &MockModel, agent: Agent, edit: &ScriptedEdit) {
    let called = mock
        .requests()
        .iter()
        .any(|request| request["scenario"]["name"] == edit.scenario);
    assert!(
        called,
        "the mock never scripted {agent}'s {}: {:#?}",
        edit.scenario,
        mock.requests()
    );
}

/// `changes` reports exactly `edit`, in a worktree kept for review; that worktree.
fn assert_changes(changes: &Value, edit: &ScriptedEdit) -> PathBuf {
    assert_eq!(changes["isolation"], "worktree", "{changes:#}");
    let file = edit.file_change();
    assert_eq!(changes["files"], file, "{changes:#}");
    for total in ["lines_added", "lines_removed"] {
        assert_eq!(changes[total], file[0][total], "{changes:#}");
    }
    assert_eq!(changes["files_changed"], 1, "{changes:#}");
    PathBuf::from(changes["worktree"].as_str().expect("the worktree kept"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_edits_in_a_worktree_with_its_shell() {
    an_isolated_edit_is_reviewed_then_applied(CODEX, ScriptedEdit::by_shell(CODEX)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_adds_a_file_in_a_worktree_with_apply_patch() {
    an_isolated_edit_is_reviewed_then_applied(CODEX, ScriptedEdit::by_file_tool(CODEX)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_edits_in_a_worktree_with_its_shell() {
    an_isolated_edit_is_reviewed_then_applied(CLAUDE, ScriptedEdit::by_shell(CLAUDE)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_adds_a_file_in_a_worktree_with_write() {
    an_isolated_edit_is_reviewed_then_applied(CLAUDE, ScriptedEdit::by_file_tool(CLAUDE)).await;
}

/// Work the agent committed on its worktree's branch counts as its changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_commits_in_a_worktree() {
    an_isolated_edit_is_reviewed_then_applied(CLAUDE, ScriptedEdit::by_shell_commit(CLAUDE)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_edits_in_a_worktree_with_its_shell() {
    an_isolated_edit_is_reviewed_then_applied(COPILOT, ScriptedEdit::by_shell(COPILOT)).await;
}
