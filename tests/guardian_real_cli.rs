//! The guardian with the four real CLIs (against the mock model server): the server is
//! SIGKILLed while the CLI's shell tool sleeps in a session of its own, and nothing of the run
//! survives. A CLI that is not installed skips locally and fails in CI (see tests/real).

mod common;
mod mcp;
mod real;

use cli_agent_engine::AgentKind;
use common::wait_until;
use mcp::Server;
use nix::sys::signal::Signal;
use real::{MockModel, Retries, Sandbox};
use serde_json::json;

/// claude's `unlimited` needs `IS_SANDBOX=1` as root; `workspace-write` pre-approves Bash too.
fn shell_permission(agent: AgentKind) -> &'static str {
    match agent {
        AgentKind::Claude => "workspace-write",
        _ => "unlimited",
    }
}

async fn sigkill_while_the_shell_tool_sleeps_leaves_nothing(agent: AgentKind) {
    let Some(bin) = real::installed(agent) else {
        return;
    };
    let mock = MockModel::start();
    let sandbox = Sandbox::new(agent, &bin, mock.port, Retries::Shortened);
    let mut server = Server::builder()
        .env(agent.bin_env_var(), &sandbox.wrapper)
        .cwd(&sandbox.workspace)
        .spawn();
    server.initialize().await;
    let arguments =
        json!({"prompt": "RUN_SHELL: sleep 478", "permission": shell_permission(agent)});
    server.start_call(agent.name(), arguments, None).await;
    wait_until("the tool's `sleep 478` runs", || {
        sandbox.survivors().into_iter().any(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.starts_with(b"sleep\x00478"))
        })
    })
    .await;

    server.signal(Signal::SIGKILL);
    wait_until("every process of the run is gone", || {
        sandbox.survivors().is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_tools_die_with_a_killed_server() {
    sigkill_while_the_shell_tool_sleeps_leaves_nothing(AgentKind::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_tools_die_with_a_killed_server() {
    sigkill_while_the_shell_tool_sleeps_leaves_nothing(AgentKind::Claude).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_tools_die_with_a_killed_server() {
    sigkill_while_the_shell_tool_sleeps_leaves_nothing(AgentKind::Gemini).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_tools_die_with_a_killed_server() {
    sigkill_while_the_shell_tool_sleeps_leaves_nothing(AgentKind::Opencode).await;
}
