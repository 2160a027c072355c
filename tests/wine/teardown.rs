//! However a call ends (its natural end, its cancel, its timeout, the server's own shutdown, the
//! server killed from outside), nothing of its run's tree is left: the fake CLI builds a tree the
//! Windows ways (a plain child, a new process group, a detached one, a grandchild, a nested job)
//! and, told `hang`, sleeps until killed.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::json;

use crate::mcp::{self, Server};
use crate::rig::{self, Rig, TREE, Wine, figure, received, win_path};

/// A rig and its server, with codex the fake CLI and the rig's `ws/` the workspace.
async fn start(test: &str) -> Option<(Rig, Server)> {
    let rig = Rig::new(Wine::from_env()?, test);
    let workspace = rig.dir("ws");
    let server = rig
        .server(&rig.path().join("bin/codex.exe"), &workspace)
        .await;
    Some((rig, server))
}

/// Starts a hanging call with a tree and waits until all of the tree runs; the call's id and
/// the run's marker.
async fn hanging_call(
    rig: &Rig,
    server: &mut Server,
    arguments: serde_json::Value,
) -> (i64, String) {
    let before = rig.processes();
    let id = server.start_call("codex", arguments, None).await;
    let up = rig.wait_for_processes(before.len() + TREE).await;
    let earlier = rig::markers(&before);
    let new: Vec<String> = rig::markers(&up)
        .into_iter()
        .filter(|m| !earlier.contains(m))
        .collect();
    assert_eq!(new.len(), 1, "one new marker on the tree: {up:#?}");
    (id, new[0].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_natural_end_leaves_nothing_of_its_tree() {
    let Some((rig, mut server)) = start("end").await else {
        return;
    };
    let result = server.call("codex", json!({"prompt": "tree"})).await;
    let ended = Instant::now();
    let seen = received(&result);
    let marker = seen["marker"]
        .as_str()
        .expect("the run's marker")
        .to_owned();
    assert_eq!(seen["prompt"], "tree");
    assert_eq!(seen["cwd"], win_path(&rig.path().join("ws")));
    rig::assert_windows_environment(&seen);
    let tree = &seen["tree"];
    for part in ["plain", "new_process_group", "detached", "nested_job"] {
        assert!(
            tree[part].is_u64() || tree[part]["pid"].is_u64(),
            "{part}: {tree:#}"
        );
    }
    assert!(tree["grandchild"]["grandchild"].is_u64(), "{tree:#}");
    assert_eq!(tree["breakaway"]["os_error"], 5, "{tree:#}");
    rig.wait_gone(&[marker]).await;
    figure(
        "natural end: the tree gone after the result",
        ended.elapsed(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_leaves_nothing_of_its_tree() {
    let Some((rig, mut server)) = start("cancel").await else {
        return;
    };
    let (id, marker) = hanging_call(&rig, &mut server, json!({"prompt": "tree hang"})).await;
    server.cancel(id, "the person pressed stop").await;
    let took = rig.wait_gone(&[marker]).await;
    figure("cancel: the tree gone after notifications/cancelled", took);
    server.ping().await;
    assert!(
        !server.has_response(id),
        "a cancelled call gets no response"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_call_leaves_nothing_of_its_tree() {
    let Some((rig, mut server)) = start("timeout").await else {
        return;
    };
    let arguments = json!({"prompt": "tree hang", "timeout_secs": 10});
    let (id, marker) = hanging_call(&rig, &mut server, arguments).await;
    assert!(
        !server.has_response(id),
        "the call ended before its timeout"
    );
    let result = server.result(id).await;
    let answered = Instant::now();
    assert!(mcp::is_error(&result), "{result:#}");
    assert_eq!(
        mcp::structured(&result)["status"],
        "timed_out",
        "{result:#}"
    );
    rig.wait_gone(&[marker]).await;
    figure(
        "timeout: the tree gone after the result",
        answered.elapsed(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_shutdown_at_stdin_eof_leaves_nothing_of_its_runs() {
    let Some((rig, mut server)) = start("shutdown").await else {
        return;
    };
    let (_, marker) = hanging_call(&rig, &mut server, json!({"prompt": "tree hang"})).await;
    let closed = Instant::now();
    server.close_stdin();
    let status = server.wait_exit(Duration::from_secs(30)).await;
    let exited = closed.elapsed();
    assert!(status.success(), "{status:?}\n{}", server.stderr());
    let took = rig.wait_gone(&[marker]).await;
    figure("shutdown: the server exited after stdin's EOF", exited);
    figure("shutdown: the tree gone after the server's exit", took);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_server_from_linux_leaves_nothing_of_its_three_runs() {
    let Some((rig, mut server)) = start("kill9").await else {
        return;
    };
    let mut markers = Vec::new();
    for _ in 0..3 {
        let (_, marker) = hanging_call(&rig, &mut server, json!({"prompt": "tree hang"})).await;
        markers.push(marker);
    }
    assert_eq!(rig.processes().len(), 3 * TREE, "{:#?}", rig.processes());
    server.signal(Signal::SIGKILL);
    let took = rig.wait_gone(&markers).await;
    assert!(!server.is_running(), "the server outlived kill -9");
    figure(
        &format!(
            "kill -9 of the server: {} processes of 3 runs gone",
            3 * TREE
        ),
        took,
    );
}
