//! The guardian: whatever kills the server (or `run`), SIGKILL included, no process of its
//! runs survives, and the guardian itself does not linger. Through the real binary, with the
//! fake CLI leaving processes everywhere a real CLI does.

use crate::common;
use crate::mcp;

use std::time::{Duration, Instant};

use mcp::Server;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::json;

/// Five calls whose CLIs ignore SIGINT and SIGTERM and leave processes in their group, in a
/// session of their own, as a double-forked daemon, and holding stdout.
const CALLS: usize = 5;
const DIRECTIVES: &str =
    "hang ignore-signals children=2 stubborn-children=1 session-child daemon hold-stdout";
/// Tagged processes per call: 2 children, 1 stubborn, the session child, the daemon and the
/// stdout holder (the fake itself is not tagged; the run marker finds it).
const TAGGED_PER_CALL: usize = 6;

fn contained_prompt(tag: &str) -> String {
    format!("{DIRECTIVES} tag={tag}")
}

/// Start the calls and wait until every process they leave behind is running.
async fn start_contained_calls(server: &mut Server, tag: &str) {
    let agents = mcp::agents();
    for n in 0..CALLS {
        let agent = agents[n % agents.len()];
        server
            .start_call(agent, json!({"prompt": contained_prompt(tag)}), None)
            .await;
    }
    common::wait_for_tagged(tag, CALLS * TAGGED_PER_CALL).await;
    let server_pid = server.pid();
    common::wait_until("every CLI carries the run marker", || {
        common::run_processes_of(server_pid).len() >= CALLS * (TAGGED_PER_CALL + 1)
    })
    .await;
}

/// Wait until no process of `tag` nor of the server's runs is alive; returns how long it took.
async fn wait_until_all_gone(tag: &str, server_pid: i32) -> Duration {
    let killed = Instant::now();
    common::wait_until("every process of the runs is gone", || {
        common::tagged_pids(tag).is_empty() && common::run_processes_of(server_pid).is_empty()
    })
    .await;
    killed.elapsed()
}

async fn wait_for_guardian(server: &Server) -> i32 {
    let mut found = None;
    common::wait_until("the server's guardian runs", || {
        found = common::guardian_of(server.pid());
        found.is_some()
    })
    .await;
    found.expect("found")
}

#[tokio::test]
async fn sigkill_of_the_server_leaves_no_process_of_any_run() {
    let tag = common::unique("guardian-sigkill");
    let mut server = Server::start().await;
    start_contained_calls(&mut server, &tag).await;

    assert_eq!(
        run_dirs_of(server.pid()),
        CALLS,
        "each confined run has its TMPDIR"
    );
    server.signal(Signal::SIGKILL);
    let elapsed = wait_until_all_gone(&tag, server.pid()).await;
    eprintln!(
        "all {} processes gone {elapsed:?} after the SIGKILL",
        CALLS * (TAGGED_PER_CALL + 1)
    );
    common::wait_until(
        "the guardian removes the runs' temporary directories",
        || run_dirs_of(server.pid()) == 0,
    )
    .await;
}

/// The private temporary directories (`cam-run-<pid>.<hex>-<n>`) of the server's runs.
fn run_dirs_of(server_pid: i32) -> usize {
    let prefix = format!("cam-run-{server_pid}.");
    std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .count()
}

#[tokio::test]
async fn sigkill_of_the_servers_whole_process_group_leaves_no_process() {
    let tag = common::unique("guardian-killpg");
    let mut server = Server::builder().own_process_group().spawn();
    server.initialize().await;
    start_contained_calls(&mut server, &tag).await;

    killpg(Pid::from_raw(server.pid()), Signal::SIGKILL).expect("kill the server's group");
    let elapsed = wait_until_all_gone(&tag, server.pid()).await;
    eprintln!("all gone {elapsed:?} after the group SIGKILL");
}

#[tokio::test]
async fn sigkill_of_run_leaves_no_process_of_its_run() {
    let tag = common::unique("guardian-run");
    let workspace = common::temp_dir("guardian-run");
    let run = Server::bare()
        .arg("run")
        .arg("claude")
        .arg("--workspace")
        .arg(workspace.path())
        .arg(contained_prompt(&tag))
        .spawn();
    common::wait_for_tagged(&tag, TAGGED_PER_CALL).await;

    run.signal(Signal::SIGKILL);
    let elapsed = wait_until_all_gone(&tag, run.pid()).await;
    eprintln!("all gone {elapsed:?} after the SIGKILL of run");
}

#[tokio::test]
async fn another_servers_runs_are_untouched_when_one_server_is_killed() {
    let doomed_tag = common::unique("guardian-doomed");
    let survivor_tag = common::unique("guardian-survivor");
    let mut doomed = Server::start().await;
    let mut survivor = Server::start().await;
    start_contained_calls(&mut doomed, &doomed_tag).await;
    let prompt = format!("silent=3 children=1 answer=still_here tag={survivor_tag}");
    let call = survivor
        .start_call("codex", json!({"prompt": prompt}), None)
        .await;
    common::wait_for_tagged(&survivor_tag, 1).await;

    doomed.signal(Signal::SIGKILL);
    wait_until_all_gone(&doomed_tag, doomed.pid()).await;
    let result = survivor.result(call).await;
    assert!(!mcp::is_error(&result), "{result}");
    assert_eq!(mcp::texts(&result)[0], "still here");
    common::wait_until("the survivor's own run is torn down", || {
        common::tagged_pids(&survivor_tag).is_empty()
    })
    .await;
}

#[tokio::test]
async fn the_guardian_exits_after_a_normal_exit_of_the_server() {
    let mut server = Server::start().await;
    let guardian = wait_for_guardian(&server).await;
    server.close_stdin();
    server.wait_exit(mcp::DEADLINE).await;
    common::wait_until("the guardian exits", || !common::is_guardian(guardian)).await;
}

#[tokio::test]
async fn the_guardian_exits_after_a_sigkill_of_the_server() {
    let server = Server::start().await;
    let guardian = wait_for_guardian(&server).await;
    server.signal(Signal::SIGKILL);
    common::wait_until("the guardian exits", || !common::is_guardian(guardian)).await;
}

#[tokio::test]
async fn the_guardian_is_in_a_session_of_its_own_and_holds_no_mcp_stdout() {
    let server = Server::start().await;
    let guardian = wait_for_guardian(&server).await;
    // It leaves our session first thing after its exec, which the wait may have seen.
    let own_session =
        || nix::unistd::getsid(Some(Pid::from_raw(guardian))).ok() == Some(Pid::from_raw(guardian));
    common::wait_until("the guardian is in a session of its own", own_session).await;
    // Another process's descriptors are listed in /proc on Linux only (macOS has no /proc).
    #[cfg(target_os = "linux")]
    {
        let stdout = std::fs::read_link(format!("/proc/{guardian}/fd/1")).expect("fd 1");
        assert_eq!(stdout, std::path::Path::new("/dev/null"));
    }
}
