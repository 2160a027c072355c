//! Issue 17 with the real CLIs against the mock model: each CLI's command line is built at
//! the loosest level its flags allow (`test_cli_permission`), so its own checks let the
//! shell tool write anywhere and only the kernel sandbox, which follows the run's level,
//! stands. Under `workspace-write` a write in the workspace lands and one outside it is
//! refused; under `read-only` both are refused; either refusal is a warning naming the
//! sandbox. A CLI that is not installed skips locally and fails in CI (see tests/real).

use crate::real;

use std::path::{Path, PathBuf};

use cli_agent_engine::{Agent, Outcome, Permission, Status};
use real::{MockModel, Retries, Sandbox};
use tokio_util::sync::CancellationToken;

/// One shell call that tries a write outside the workspace, then one inside it.
fn touch_prompt(outside: &Path, inside: &Path) -> String {
    format!(
        "RUN_SHELL: touch {} ; touch {}",
        outside.display(),
        inside.display()
    )
}

/// A run at `level` whose shell tool touches `name` outside the workspace (in a directory
/// of the sandbox that no level lets the CLI write) and inside it; the two paths and the
/// outcome.
async fn touch_both(
    sandbox: &Sandbox,
    level: Permission,
    name: &str,
) -> (PathBuf, PathBuf, Outcome) {
    let outside = sandbox.root().join("outside").join(name);
    let inside = sandbox.workspace.join(name);
    let mut request = sandbox.request(&touch_prompt(&outside, &inside));
    request.permission = level;
    let engine = sandbox.loosened_engine();
    let (outcome, _) =
        real::run_on(&engine, sandbox.agent, request, CancellationToken::new()).await;
    assert_eq!(outcome.status, Status::Completed, "{outcome:#?}");
    (outside, inside, outcome)
}

/// Whether a warning of `outcome` names the sandbox at `level`.
fn warns_of_the_sandbox(outcome: &Outcome, level: Permission) -> bool {
    let words = format!("the Landlock sandbox ({level} level)");
    outcome
        .warnings
        .iter()
        .any(|warning| warning.contains(&words))
}

async fn the_kernel_bounds_the_shell_tool(agent: Agent) {
    let Some(bin) = real::installed(agent) else {
        return;
    };
    let mock = MockModel::start();
    let sandbox = Sandbox::new(agent, &bin, mock.port, Retries::Shortened);
    std::fs::create_dir(sandbox.root().join("outside")).expect("the outside dir");

    let level = Permission::WorkspaceWrite;
    let (outside, inside, outcome) = touch_both(&sandbox, level, "written").await;
    assert!(
        !outside.exists(),
        "{agent} wrote outside the workspace: {outcome:#?}"
    );
    assert!(
        inside.exists(),
        "{agent} could not write in the workspace: {outcome:#?}"
    );
    assert!(warns_of_the_sandbox(&outcome, level), "{outcome:#?}");

    let level = Permission::ReadOnly;
    let (outside, inside, outcome) = touch_both(&sandbox, level, "read-only").await;
    assert!(
        !outside.exists(),
        "{agent} wrote outside the workspace: {outcome:#?}"
    );
    assert!(
        !inside.exists(),
        "{agent} wrote under read-only: {outcome:#?}"
    );
    assert!(warns_of_the_sandbox(&outcome, level), "{outcome:#?}");
    // The refusals reached the model as the tool's output.
    let prompt = touch_prompt(&outside, &inside);
    assert!(
        mock.requests_with(agent, &prompt)
            .iter()
            .any(|request| request["tool_output"].to_string().contains("denied")),
        "{:#?}",
        mock.requests()
    );
    sandbox.assert_nothing_left();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cli_is_bounded_by_the_kernel_sandbox() {
    real::for_every_cli(the_kernel_bounds_the_shell_tool).await;
}
