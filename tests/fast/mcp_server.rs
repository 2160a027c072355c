//! `cli-agent-mcp serve` end to end: the built binary, spoken to over its stdio by the client in
//! tests/support (`mcp`), with the fake CLI. Tools and schemas, results, bad arguments, progress,
//! and the lifecycle contract of REFACTOR_SPEC.md (cancel, SIGINT, shutdown, failure
//! isolation), each checked on the process table through the fake's `tag` directive.

use crate::common;
use crate::mcp;

use std::time::{Duration, Instant};

use common::{assert_none_tagged, tagged_pids, temp_dir, unique, wait_for_tagged, wait_until};
use mcp::{JOB_TOOLS, Server, agents, all_text, is_error, structured, texts};
#[cfg(unix)]
use nix::sys::signal::Signal;
use serde_json::{Value, json};

/// The grace every test server runs with (`Server::builder` sets `CAM_GRACE_SECS=1`).
const GRACE: Duration = Duration::from_secs(1);
/// What the lifecycle contract allows a shutdown: the grace plus 2 s.
const SHUTDOWN_BOUND: Duration = Duration::from_secs(3);

fn assert_completed(result: &Value) {
    assert!(!is_error(result), "{result:#}");
    assert_eq!(structured(result)["status"], "completed", "{result:#}");
}

/// Every line the server wrote was JSON-RPC.
fn assert_only_json_rpc(server: &Server) {
    for message in server.messages() {
        assert_eq!(
            message["jsonrpc"], "2.0",
            "not JSON-RPC on stdout: {message}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Serving

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_its_own_name_and_version_at_every_initialize_version() {
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut server = Server::builder().spawn();
        let init = server.initialize_with(version).await;
        assert_eq!(init["protocolVersion"], version);
        assert_eq!(init["serverInfo"]["name"], "cli-agent-mcp");
        assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(init["capabilities"]["tools"].is_object(), "{init}");
        assert!(
            init["capabilities"]["logging"].is_object(),
            "warnings also go to the client (tests/fast/mcp_logging.rs): {init}"
        );
        server.ping().await;
        server.close_stdin();
        assert_eq!(server.wait_exit(SHUTDOWN_BOUND).await.code(), Some(0));
        assert_only_json_rpc(&server);
        assert!(server.stderr().contains("serving MCP on stdio"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bare_binary_serves() {
    let mut server = Server::bare().spawn();
    let init = server.initialize().await;
    assert_eq!(init["serverInfo"]["name"], "cli-agent-mcp");
    let result = server.call("codex", json!({"prompt": "hi"})).await;
    assert_completed(&result);
}

/// The 2026-07-28 lifecycle has no `initialize`: every request carries version and
/// capabilities in `_meta`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_lists_and_calls_without_initialize() {
    let mut server = Server::builder().spawn();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": mcp::MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let id = server
        .request("server/discover", json!({"_meta": meta}))
        .await;
    let discovered = server.result(id).await;
    let info = &discovered["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "cli-agent-mcp", "{discovered}");
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        discovered["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!(mcp::MODERN_VERSION))),
        "{discovered}"
    );
    let id = server.request("tools/list", json!({"_meta": meta})).await;
    let tools = server.result(id).await;
    assert_eq!(
        tools["tools"].as_array().map(Vec::len),
        Some(agents().len() + JOB_TOOLS.len()),
        "{tools}"
    );

    let mut call_meta = meta.clone();
    call_meta["progressToken"] = json!("modern");
    let params = json!({"name": "gemini", "arguments": {"prompt": "stream=1"}, "_meta": call_meta});
    let id = server.request("tools/call", params).await;
    let result = server.result(id).await;
    assert_completed(&result);
    assert!(
        !server.progress("modern").is_empty(),
        "progress in 2026-07-28 too"
    );
}

// ---------------------------------------------------------------------------------------------
// Tools

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_one_tool_per_cli_with_input_and_output_schemas_then_the_job_tools() {
    let mut server = Server::start().await;
    let id = server.request("tools/list", json!({})).await;
    let list = server.result(id).await;
    let tools = list["tools"].as_array().expect("tools");
    let names: Vec<_> = tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, [agents(), JOB_TOOLS.to_vec()].concat());
    for tool in &tools[..agents().len()] {
        let name = tool["name"].as_str().unwrap_or("");
        let input = &tool["inputSchema"];
        assert_eq!(input["type"], "object");
        assert_eq!(input["required"], json!(["prompt"]), "{name}");
        for field in [
            "prompt",
            "workspace",
            "permission",
            "model",
            "session_id",
            "timeout_secs",
        ] {
            assert!(
                input["properties"][field].is_object(),
                "{name} lacks {field}"
            );
        }
        assert_eq!(
            input["properties"]["permission"]["enum"],
            json!(["read-only", "workspace-write", "unlimited"])
        );
        assert_eq!(input["properties"]["permission"]["default"], "read-only");
        let claude_only = input["properties"]["append_system_prompt"].is_object();
        assert_eq!(claude_only, name == "claude", "{name}");
        let output = &tool["outputSchema"];
        assert_eq!(output["type"], "object", "{name}");
        assert!(output["properties"]["status"].is_object(), "{name}");
        assert!(output["properties"]["session_id"].is_object(), "{name}");
        let resume = input["properties"]["session_id"]["description"]
            .as_str()
            .unwrap_or("");
        assert!(resume.contains("fresh conversation"), "{name}: {resume}");
    }
    // What every agent tool shares is said once, in the instructions, so eight CLIs with the
    // arguments still to come stay within the host model's budget.
    let bytes = mcp::ListedBytes::of(&list);
    let eight = bytes.read_with(8, mcp::still_to_come(&list));
    assert!(
        eight <= TOOLS_LIST_GOAL,
        "{bytes:?}: {eight} bytes with eight CLIs"
    );
}

/// The most the host's model may read of `tools/list` with every CLI installed.
const TOOLS_LIST_GOAL: usize = 16 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enable_and_disable_choose_the_tools() {
    let mut server = Server::builder()
        .arg("--enable")
        .arg("claude,codex")
        .spawn();
    server.initialize().await;
    assert_eq!(server.tool_names().await[..2], ["codex", "claude"]);
    let id = server
        .start_call("gemini", json!({"prompt": "hi"}), None)
        .await;
    let response = server.response(id).await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let message = response["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("offers codex, claude"), "{message}");
    server.ping().await;

    let mut server = Server::builder().env("CAM_DISABLE", "gemini").spawn();
    server.initialize().await;
    assert_eq!(
        server.tool_names().await[..3],
        ["codex", "claude", "opencode"]
    );

    let mut server = Server::builder()
        .env("CAM_ENABLE", "opencode")
        .arg("--disable")
        .arg("opencode")
        .spawn();
    assert_eq!(
        server.wait_exit(Duration::from_secs(30)).await.code(),
        Some(2)
    );
    assert!(
        server.stderr().contains("no tool left"),
        "{}",
        server.stderr()
    );
}

// ---------------------------------------------------------------------------------------------
// Results

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_answers_with_text_and_the_structured_outcome() {
    let mut server = Server::start().await;
    let mut calls = Vec::new();
    for agent in agents() {
        let prompt = format!("tool answer=the_{agent}_answer");
        calls.push((
            agent,
            server
                .start_call(agent, json!({"prompt": prompt}), None)
                .await,
        ));
    }
    for (agent, id) in calls {
        let result = server.result(id).await;
        assert_completed(&result);
        let texts = texts(&result);
        assert_eq!(texts[0], format!("the {agent} answer"));
        let outcome = structured(&result);
        assert_eq!(outcome["agent"], agent);
        assert_eq!(outcome["answer"], format!("the {agent} answer"));
        // A CLI that cannot resume (cline) names no session, and its result says none.
        let resumes =
            cli_agent_engine::clis::builtin(agent).is_none_or(|cli| cli.resumes().is_ok());
        match outcome["session_id"].as_str() {
            Some(session_id) => assert!(
                resumes && texts.last().is_some_and(|t| t.contains(session_id)),
                "{texts:?}"
            ),
            None => assert!(!resumes, "{agent}: a session id in {outcome}"),
        }
        assert_eq!(outcome["tools"]["calls"], 1, "{outcome}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_id_resumes_the_conversation() {
    let mut server = Server::start().await;
    let first = server.call("claude", json!({"prompt": "hi"})).await;
    let session_id = structured(&first)["session_id"].clone();
    assert!(session_id.is_string(), "{first:#}");
    let again = server
        .call(
            "claude",
            json!({"prompt": "more", "session_id": session_id}),
        )
        .await;
    assert_completed(&again);
    assert_eq!(structured(&again)["session_id"], session_id);
}

/// A fork answers under a session of its own, its CLI's fork and effort flags on the command
/// line; a CLI without either refuses it saying why, as does a fork without its session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_gets_a_session_of_its_own_and_what_a_cli_lacks_is_refused_with_the_reason() {
    let home = temp_dir("mcp-fork");
    // Unconfined: the fake CLI records its argv outside the workspace (a test instrument).
    let mut server = Server::builder()
        .env("CAM_SANDBOX", "off")
        .cwd(home.path())
        .spawn();
    server.initialize().await;
    let first = server.call("claude", json!({"prompt": "hi"})).await;
    let original = structured(&first)["session_id"].clone();
    let argv_out = home.path().join("argv.json");
    let prompt = format!("argv-out={}", argv_out.display());
    let fork = json!({"prompt": prompt, "session_id": original, "fork": true, "effort": "high"});
    let fork = server.call("claude", fork).await;
    assert_completed(&fork);
    let forked = &structured(&fork)["session_id"];
    assert!(forked.is_string() && *forked != original, "{fork:#}");
    let seen: Value =
        serde_json::from_slice(&std::fs::read(&argv_out).expect("argv-out")).expect("argv json");
    let resume = format!("--resume={}", original.as_str().unwrap_or_default());
    for flag in [resume.as_str(), "--fork-session", "--effort=high"] {
        assert!(
            seen["argv"]
                .as_array()
                .is_some_and(|argv| argv.contains(&json!(flag))),
            "{flag}: {seen}"
        );
    }

    let session = json!({"prompt": "x", "session_id": "s-1", "fork": true});
    let cases = [
        ("gemini", session.clone(), "gemini cannot take `fork`: "),
        (
            "copilot",
            session,
            "copilot cannot take `fork`: it resumes a session only in place",
        ),
        (
            "qwen",
            json!({"prompt": "x", "effort": "low"}),
            "qwen cannot take `effort`: ",
        ),
        (
            "codex",
            json!({"prompt": "x", "fork": true}),
            "pass its `session_id` too",
        ),
        (
            "claude",
            json!({"prompt": "x", "effort": "extreme"}),
            "unknown variant `extreme`",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let result = server.call(tool, arguments.clone()).await;
        assert!(is_error(&result), "{tool} {arguments}: {result:#}");
        let text = all_text(&result);
        assert!(text.contains(expected), "{tool} {arguments}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspace_defaults_to_the_servers_directory_and_the_arguments_reach_the_cli() {
    let (home, elsewhere) = (temp_dir("mcp-home"), temp_dir("mcp-elsewhere"));
    // Unconfined: the fake CLI records its argv outside the workspace (a test instrument).
    let mut server = Server::builder()
        .env("CAM_SANDBOX", "off")
        .cwd(home.path())
        .spawn();
    server.initialize().await;
    let argv_out = home.path().join("argv.json");
    let prompt = format!("argv-out={}", argv_out.display());
    assert_completed(&server.call("codex", json!({"prompt": prompt})).await);
    let seen: Value =
        serde_json::from_slice(&std::fs::read(&argv_out).expect("argv-out")).expect("argv json");
    let canonical = |p: &std::path::Path| std::fs::canonicalize(p).expect("canonicalize");
    assert_eq!(
        seen["cwd"],
        canonical(home.path()).to_string_lossy().as_ref()
    );
    assert!(seen["argv"].to_string().contains("read-only"), "{seen}");

    let args = json!({"prompt": prompt, "workspace": elsewhere.path(),
                      "permission": "workspace-write", "model": "gpt-test"});
    assert_completed(&server.call("codex", args).await);
    let seen: Value =
        serde_json::from_slice(&std::fs::read(&argv_out).expect("argv-out")).expect("argv json");
    assert_eq!(
        seen["cwd"],
        canonical(elsewhere.path()).to_string_lossy().as_ref()
    );
    let argv = seen["argv"].to_string();
    assert!(
        argv.contains("workspace-write") && argv.contains("gpt-test"),
        "{argv}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_crashed_and_timed_out_runs_are_errors_with_message_and_hint() {
    let mut server = Server::start().await;
    let failed = server
        .call(
            "codex",
            json!({"prompt": "fail=quota_exceeded_for_this_account"}),
        )
        .await;
    assert!(is_error(&failed), "{failed:#}");
    assert_eq!(structured(&failed)["status"], "failed");
    let text = all_text(&failed);
    assert!(
        text.contains("quota exceeded") && text.contains("hint: "),
        "{text}"
    );

    let crashed = server
        .call("gemini", json!({"prompt": "crash=segfault_in_the_cli"}))
        .await;
    assert!(is_error(&crashed), "{crashed:#}");
    assert_eq!(structured(&crashed)["error"]["kind"], "crashed");
    assert!(
        all_text(&crashed).contains("segfault in the cli"),
        "{crashed:#}"
    );

    let timed_out = server
        .call("opencode", json!({"prompt": "hang", "timeout_secs": 1}))
        .await;
    assert!(is_error(&timed_out), "{timed_out:#}");
    assert_eq!(structured(&timed_out)["status"], "timed_out");
    let text = all_text(&timed_out);
    assert!(
        text.contains("total timeout") && text.contains("hint: "),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_arguments_get_a_clear_error_and_the_server_carries_on() {
    let mut server = Server::start().await;
    // Inside the allowed roots (outside them, tests/fast/policy.rs shows the refusal).
    let missing = std::fs::canonicalize(std::env::temp_dir())
        .expect("temp dir")
        .join(unique("no-such-dir"));
    let missing_error = format!("{} is not an existing directory", missing.display());
    let cases = [
        (json!({}), "missing field `prompt`"),
        (json!({"prompt": "  "}), "the prompt is empty"),
        (
            json!({"prompt": "x", "workspace": missing}),
            missing_error.as_str(),
        ),
        (
            json!({"prompt": "x", "permission": "root"}),
            "unknown variant `root`",
        ),
        (json!({"prompt": "x", "cwd": "/tmp"}), "unknown field `cwd`"),
        (
            json!({"prompt": "x", "append_system_prompt": "y"}),
            "only claude takes it",
        ),
        (json!({"prompt": "x", "timeout_secs": 0}), "at least 1"),
    ];
    for (arguments, expected) in cases {
        let result = server.call("codex", arguments.clone()).await;
        assert!(is_error(&result), "{arguments}: {result:#}");
        let text = all_text(&result);
        assert!(text.contains(expected), "{arguments}: {text}");
    }
    assert_completed(&server.call("codex", json!({"prompt": "hi"})).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_comes_from_events_rises_is_rate_limited_and_stops_with_the_response() {
    let mut server = Server::start().await;
    let id = server
        .start_call("codex", json!({"prompt": "stream=2 tool"}), Some("tok"))
        .await;
    let result = server.result(id).await;
    assert_completed(&result);
    let progress = server.progress("tok");
    assert!(!progress.is_empty(), "no progress notification");
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "not rising: {values:?}"
    );
    let messages: Vec<&str> = progress
        .iter()
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert!(
        messages.iter().all(|m| m.starts_with("codex: ")),
        "{messages:?}"
    );
    assert!(messages.contains(&"codex: thinking"), "{messages:?}");
    // The fake streamed 20 events in 2 s; at most one notification per 250 ms goes out.
    let ms = structured(&result)["duration_ms"].as_u64().unwrap_or(0);
    assert!(
        (progress.len() as u64) <= ms / 250 + 2,
        "{} notifications in {ms} ms",
        progress.len()
    );

    // None after the response: everything the server wrote before a later ping has arrived.
    server.ping().await;
    let messages = server.messages();
    let answered_at = messages
        .iter()
        .position(|m| m["id"] == id)
        .expect("the response");
    let late: Vec<_> = messages[answered_at..]
        .iter()
        .filter(|m| m["params"]["progressToken"] == "tok")
        .collect();
    assert!(late.is_empty(), "progress after the response: {late:?}");

    // No token, no progress.
    let before = server.messages().len();
    let quiet = server.call("codex", json!({"prompt": "stream=1"})).await;
    assert_completed(&quiet);
    let notifications = server.messages()[before..]
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(notifications, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_run_still_reports_progress_at_the_heartbeat() {
    let mut server = Server::builder()
        .arg("--progress-heartbeat-secs")
        .arg("1")
        .spawn();
    server.initialize().await;
    let id = server
        .start_call("gemini", json!({"prompt": "silent=3"}), Some("beat"))
        .await;
    assert_completed(&server.result(id).await);
    let beats: Vec<String> = server
        .progress("beat")
        .iter()
        .filter_map(|p| p["message"].as_str().map(str::to_owned))
        .filter(|m| m.ends_with(" s)"))
        .collect();
    assert!(
        beats.len() >= 2,
        "heartbeats during 5 s of silence: {beats:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Cancellation (REFACTOR_SPEC P3, P4, P5, L1)

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_tears_down_only_its_own_call_and_the_server_keeps_serving() {
    let (doomed, survivor) = (unique("mcp-doomed"), unique("mcp-survivor"));
    let mut server = Server::start().await;
    let doomed_prompt = format!("stream=60 children=2 session-child daemon tag={doomed}");
    let doomed_id = server
        .start_call("codex", json!({"prompt": doomed_prompt}), Some("doomed"))
        .await;
    // Long enough to outlive the other call's cancel on a loaded machine.
    let survivor_prompt = format!("stream=10 children=1 answer=survived tag={survivor}");
    let survivor_id = server
        .start_call("claude", json!({"prompt": survivor_prompt}), None)
        .await;
    wait_for_tagged(&doomed, 4).await;
    wait_for_tagged(&survivor, 1).await;
    server
        .wait_for("progress of the doomed call", |_| {
            (!server.progress("doomed").is_empty()).then_some(())
        })
        .await;

    server.cancel(doomed_id, "user pressed stop").await;
    wait_until("the cancelled call's tree is gone", || {
        tagged_pids(&doomed).is_empty()
    })
    .await;
    assert!(
        !tagged_pids(&survivor).is_empty(),
        "the other call's processes were touched"
    );
    server.ping().await;
    let progress_after_cancel = server.progress("doomed").len();

    let result = server.result(survivor_id).await;
    assert_completed(&result);
    assert_eq!(texts(&result)[0], "survived");
    assert_none_tagged(&survivor);
    server.ping().await;
    assert!(
        !server.has_response(doomed_id),
        "a cancelled call gets no response"
    );
    assert_eq!(
        server.progress("doomed").len(),
        progress_after_cancel,
        "progress after the cancel"
    );
    assert_completed(&server.call("gemini", json!({"prompt": "hi"})).await);
    assert!(server.is_running());
}

// ---------------------------------------------------------------------------------------------
// SIGINT (REFACTOR_SPEC P1, P2, L2, L3)

/// Start one hanging call per agent, each with its own tag, and wait until they all run.
async fn start_hanging_calls(server: &mut Server, directives: &str) -> Vec<(i64, String)> {
    let mut calls = Vec::new();
    for agent in agents() {
        let tag = unique(&format!("mcp-{agent}"));
        let prompt = format!("hang {directives} tag={tag}");
        let id = server
            .start_call(agent, json!({"prompt": prompt}), Some(&tag))
            .await;
        calls.push((id, tag));
    }
    for (_, tag) in &calls {
        wait_for_tagged(tag, 1).await;
    }
    calls
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_with_active_calls_cancels_and_answers_each_and_the_server_keeps_serving() {
    let mut server = Server::start().await;
    let calls = start_hanging_calls(&mut server, "children=1 session-child").await;
    server.signal(Signal::SIGINT);
    for (id, tag) in &calls {
        let result = server.result(*id).await;
        assert!(is_error(&result), "{result:#}");
        assert_eq!(structured(&result)["status"], "cancelled");
        assert!(
            all_text(&result).contains("cancelled by SIGINT"),
            "{result:#}"
        );
        assert_none_tagged(tag);
    }
    server.ping().await;
    assert_completed(&server.call("opencode", json!({"prompt": "hi"})).await);
    assert!(server.is_running());
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_when_idle_exits_0_in_every_mode() {
    for mode in ["cancel", "cancel-then-exit", "exit"] {
        let mut server = Server::builder().arg("--sigint").arg(mode).spawn();
        server.initialize().await;
        server.signal(Signal::SIGINT);
        let status = server.wait_exit(SHUTDOWN_BOUND).await;
        assert_eq!(status.code(), Some(0), "{mode}: {}", server.stderr());
    }
}

/// A call whose teardown takes the whole grace: the CLI and its children ignore SIGINT.
#[cfg(unix)]
async fn start_stubborn_call(server: &mut Server) -> (i64, String) {
    let tag = unique("mcp-stubborn");
    let prompt = format!("hang ignore-signals stubborn-children=2 session-child tag={tag}");
    let id = server
        .start_call("claude", json!({"prompt": prompt}), None)
        .await;
    wait_for_tagged(&tag, 3).await;
    (id, tag)
}

#[cfg(unix)]
async fn wait_for_log(server: &Server, line: &str) {
    wait_until(&format!("the server logs `{line}`"), || {
        server.stderr().contains(line)
    })
    .await;
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sigint_within_the_window_shuts_down_in_cancel_then_exit_mode() {
    let mut server = Server::builder()
        .env("CAM_GRACE_SECS", "5")
        .env("CAM_SIGINT_MODE", "cancel-then-exit")
        .spawn();
    server.initialize().await;
    let (_, tag) = start_stubborn_call(&mut server).await;
    server.signal(Signal::SIGINT);
    wait_for_log(&server, "SIGINT: cancelled the running jobs").await;
    let second = Instant::now();
    server.signal(Signal::SIGINT);
    let status = server
        .wait_exit(Duration::from_secs(5) + SHUTDOWN_BOUND)
        .await;
    assert_eq!(status.code(), Some(0), "{}", server.stderr());
    assert!(
        second.elapsed() < Duration::from_secs(7),
        "{:?}",
        second.elapsed()
    );
    assert_none_tagged(&tag);
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_cancel_mode_a_second_sigint_only_cancels() {
    let mut server = Server::builder()
        .env("CAM_GRACE_SECS", "3")
        .arg("--sigint")
        .arg("cancel")
        .spawn();
    server.initialize().await;
    let (id, tag) = start_stubborn_call(&mut server).await;
    server.signal(Signal::SIGINT);
    wait_for_log(&server, "SIGINT: cancelled the running jobs").await;
    server.signal(Signal::SIGINT);
    let result = server.result(id).await;
    assert!(
        all_text(&result).contains("cancelled by SIGINT"),
        "{result:#}"
    );
    assert_none_tagged(&tag);
    server.ping().await;
    assert!(server.is_running());
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_exit_mode_sigint_shuts_down_with_calls_active() {
    let mut server = Server::builder().arg("--sigint").arg("exit").spawn();
    server.initialize().await;
    let calls = start_hanging_calls(&mut server, "ignore-signals children=1 daemon").await;
    server.signal(Signal::SIGINT);
    assert_eq!(server.wait_exit(SHUTDOWN_BOUND).await.code(), Some(0));
    for (_, tag) in &calls {
        assert_none_tagged(tag);
    }
}

// ---------------------------------------------------------------------------------------------
// Shutdown (REFACTOR_SPEC L4)

/// Four stubborn runs, one per CLI: a teardown each takes the whole grace, so only
/// concurrent teardowns fit the bound.
async fn shutdown_tears_everything_down(how: &str, stop: impl FnOnce(&mut Server)) {
    let mut server = Server::start().await;
    let directives = "ignore-signals stubborn-children=1 session-child daemon";
    let calls = start_hanging_calls(&mut server, directives).await;
    for (_, tag) in &calls {
        wait_for_tagged(tag, 3).await;
    }
    let stopped = Instant::now();
    stop(&mut server);
    let status = server
        .wait_exit(SHUTDOWN_BOUND + Duration::from_secs(30))
        .await;
    let took = stopped.elapsed();
    assert_eq!(status.code(), Some(0), "{how}: {}", server.stderr());
    assert!(
        took < SHUTDOWN_BOUND,
        "{how}: exit took {took:?}, over the grace ({GRACE:?}) plus 2 s"
    );
    for (_, tag) in &calls {
        assert_none_tagged(tag);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_eof_cancels_every_run_and_exits_0_in_time() {
    shutdown_tears_everything_down("stdin EOF", Server::close_stdin).await;
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_cancels_every_run_and_exits_0_in_time() {
    shutdown_tears_everything_down("SIGTERM", |server| server.signal(Signal::SIGTERM)).await;
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_cancels_every_run_and_exits_0_in_time() {
    shutdown_tears_everything_down("SIGHUP", |server| server.signal(Signal::SIGHUP)).await;
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_the_calls_it_cancels_when_the_client_is_still_reading() {
    let mut server = Server::start().await;
    let calls = start_hanging_calls(&mut server, "children=1").await;
    server.signal(Signal::SIGTERM);
    for (id, _) in &calls {
        let result = server.result(*id).await;
        assert!(all_text(&result).contains("SIGTERM"), "{result:#}");
    }
    assert_eq!(server.wait_exit(SHUTDOWN_BOUND).await.code(), Some(0));
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_a_server_whose_stderr_nobody_reads_any_more() {
    // Its logs fail to be written: that must not take the signal handling down with them.
    let mut server = Server::builder().stderr_closed().spawn();
    server.initialize().await;
    let calls = start_hanging_calls(&mut server, "children=1").await;
    server.signal(Signal::SIGTERM);
    assert_eq!(server.wait_exit(SHUTDOWN_BOUND).await.code(), Some(0));
    for (_, tag) in &calls {
        assert_none_tagged(tag);
    }
}

// ---------------------------------------------------------------------------------------------
// Failure isolation (REFACTOR_SPEC L5, L6)

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_cli_fails_only_its_own_call_with_an_actionable_error() {
    let mut server = Server::builder()
        .env("CAM_GEMINI_BIN", "/nonexistent/gemini")
        .env_remove("CAM_OPENCODE_BIN")
        .env("PATH", common::bare_path())
        .spawn();
    server.initialize().await;
    let working = server
        .start_call(
            "codex",
            json!({"prompt": "stream=1 answer=still_here"}),
            None,
        )
        .await;
    let gemini = server.call("gemini", json!({"prompt": "hi"})).await;
    assert!(is_error(&gemini), "{gemini:#}");
    let text = all_text(&gemini);
    for needle in [
        "/nonexistent/gemini",
        "CAM_GEMINI_BIN",
        "npm install -g @google/gemini-cli",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    let opencode = server.call("opencode", json!({"prompt": "hi"})).await;
    let text = all_text(&opencode);
    for needle in [
        "not found",
        "CAM_OPENCODE_BIN",
        "npm install -g opencode-ai",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    let result = server.result(working).await;
    assert_completed(&result);
    assert_eq!(texts(&result)[0], "still here");
}

#[cfg(debug_assertions)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_inside_one_call_fails_only_that_call() {
    let mut server = Server::builder()
        .env("CAM_DEBUG_PANIC", "please-panic-here")
        .spawn();
    server.initialize().await;
    let other = server
        .start_call("codex", json!({"prompt": "stream=1 answer=unharmed"}), None)
        .await;
    let panicked = server
        .call("claude", json!({"prompt": "please-panic-here"}))
        .await;
    assert!(is_error(&panicked), "{panicked:#}");
    assert!(
        all_text(&panicked).contains("internal error"),
        "{panicked:#}"
    );
    let result = server.result(other).await;
    assert_eq!(texts(&result)[0], "unharmed");
    assert_completed(&server.call("claude", json!({"prompt": "hi"})).await);
    assert!(server.is_running());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_request_gets_an_error_and_the_server_carries_on() {
    let mut server = Server::start().await;
    let id = server
        .request(
            "tools/call",
            json!({"name": "codex", "arguments": "not an object"}),
        )
        .await;
    let response = server.response(id).await;
    assert!(response.get("error").is_some(), "{response}");
    server.ping().await;
    assert_completed(&server.call("codex", json!({"prompt": "hi"})).await);
}
