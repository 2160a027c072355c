//! Jobs end to end, through the real binary over stdio, against the fake CLIs: hand-off,
//! background jobs and `job_wait`, paging a big answer, caps and the queue, cancelling, the
//! store shared between servers and surviving them, and a store that can't be used.

use crate::common;
use crate::mcp;

use std::path::Path;
use std::time::Duration;

use cli_agent_engine::platform;
#[cfg(unix)]
use common::wait_until;
use common::{assert_none_tagged, run_processes_of, temp_dir, unique, wait_for_tagged};
use mcp::{Server, all_text, is_error, job_id, structured, texts};
#[cfg(unix)]
use nix::sys::signal::Signal;
use serde_json::{Value, json};

/// A server keeping its jobs in `state`.
fn server_with_state(state: &Path) -> mcp::Builder {
    Server::builder().env("CAM_STATE_DIR", state)
}

/// `job_wait` on `ids` until every one has ended; the last result.
async fn wait_all(server: &mut Server, ids: &[String]) -> Value {
    loop {
        let waited = server
            .call("job_wait", json!({"job_ids": ids, "timeout_secs": 30}))
            .await;
        assert!(!is_error(&waited), "{waited:#}");
        if structured(&waited)["unfinished"] == 0 {
            return waited;
        }
    }
}

fn waited_job<'a>(waited: &'a Value, id: &str) -> &'a Value {
    structured(waited)["jobs"]
        .as_array()
        .and_then(|jobs| jobs.iter().find(|job| job["job_id"] == id))
        .unwrap_or_else(|| panic!("{id} not in {waited:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_is_handed_off_and_job_wait_collects_its_answer() {
    let mut server = Server::start().await;
    let handed_off = server
        .call(
            "codex",
            json!({"prompt": "silent=4 answer=late_but_whole", "handoff_after_secs": 1}),
        )
        .await;
    assert!(!is_error(&handed_off), "{handed_off:#}");
    assert_eq!(
        structured(&handed_off)["status"],
        "running",
        "{handed_off:#}"
    );
    let id = job_id(&handed_off);
    let text = all_text(&handed_off);
    assert!(
        text.contains(&format!("job_wait {{\"job_ids\": [\"{id}\"]}}")),
        "{text}"
    );

    // A wait the client gives up on reports progress and leaves the job running.
    let abandoned = server
        .start_call("job_wait", json!({"job_ids": [&id]}), Some("waiting"))
        .await;
    server
        .wait_for("job_wait's progress", |messages| {
            messages
                .iter()
                .find(|m| m["params"]["progressToken"] == "waiting")
                .cloned()
        })
        .await;
    server.cancel(abandoned, "the host gave up").await;
    let progress = server.progress("waiting");
    assert!(
        progress[0]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("job_wait: 0 of 1 jobs ended")),
        "{progress:#?}"
    );

    let waited = wait_all(&mut server, std::slice::from_ref(&id)).await;
    let job = waited_job(&waited, &id);
    assert_eq!(job["status"], "completed", "{waited:#}");
    assert_eq!(job["answer"], "late but whole");
    assert!(job["session_id"].is_string(), "{waited:#}");

    let result = server.call("job_result", json!({"job_id": id})).await;
    assert_eq!(texts(&result)[0], "late but whole");
    assert_eq!(structured(&result)["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_ends_before_the_hand_off_answers_as_before() {
    let mut server = Server::start().await;
    let result = server
        .call(
            "claude",
            json!({"prompt": "answer=quick", "handoff_after_secs": 30}),
        )
        .await;
    assert_eq!(structured(&result)["status"], "completed");
    assert_eq!(texts(&result)[0], "quick");
    assert!(structured(&result)["job_id"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_wait_any_returns_at_the_first_end_and_reports_the_others_running() {
    let mut server = Server::start().await;
    let tag = unique("wait-any");
    let fast = server
        .call(
            "gemini",
            json!({"prompt": "answer=first", "background": true}),
        )
        .await;
    let slow = server
        .call(
            "codex",
            json!({"prompt": format!("stream=60 tag={tag} children=1"), "background": true}),
        )
        .await;
    let (fast, slow) = (job_id(&fast), job_id(&slow));
    wait_for_tagged(&tag, 1).await;

    let waited = server
        .call(
            "job_wait",
            json!({"job_ids": [&fast, &slow], "mode": "any", "timeout_secs": 30}),
        )
        .await;
    assert_eq!(structured(&waited)["ended"], 1, "{waited:#}");
    assert_eq!(waited_job(&waited, &fast)["answer"], "first");
    let running = waited_job(&waited, &slow);
    assert_eq!(running["status"], "running", "{waited:#}");
    assert!(running["elapsed_secs"].is_u64(), "{waited:#}");
    assert!(
        running["next"]
            .as_str()
            .is_some_and(|next| next.contains(&slow))
    );

    let cancelled = server.call("job_cancel", json!({"job_id": &slow})).await;
    assert_eq!(
        structured(&cancelled)["status"],
        "cancelled",
        "{cancelled:#}"
    );
    assert_none_tagged(&tag);
}

/// An answer of every kind of character the pages must not split: `_` is a space to the fake.
fn varied_answer(bytes: usize) -> String {
    let mut answer = String::with_capacity(bytes + 16);
    let mut n = 0u64;
    while answer.len() < bytes {
        answer.push_str(&format!("{n:07}é→😀_"));
        n += 1;
    }
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_8_mib_answer_is_budgeted_in_the_result_and_pages_back_whole() {
    let directive = varied_answer(8 * 1024 * 1024);
    let expected = directive.replace('_', " ");
    let mut server = Server::start().await;
    let result = server
        .call("claude", json!({"prompt": format!("answer={directive}")}))
        .await;
    assert_eq!(structured(&result)["status"], "completed");
    let total = expected.chars().count() as u64;
    assert_eq!(structured(&result)["answer_chars"], total);
    let id = job_id(&result);

    let mut paged = String::new();
    let mut offset = 0u64;
    loop {
        let page = server
            .call(
                "job_result",
                json!({"job_id": &id, "offset": offset, "limit": 1_500_000}),
            )
            .await;
        paged.push_str(&texts(&page)[0]);
        match structured(&page)["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(paged.len(), expected.len());
    assert!(paged == expected, "the pages put together are the answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_mib_answer_stays_within_the_budget_and_names_the_call_for_the_rest() {
    const BUDGET: usize = 20_000;
    let mut server = Server::start().await;
    let result = server
        .call(
            "codex",
            json!({"prompt": format!("answer-bytes={}", 1024 * 1024)}),
        )
        .await;
    let answer = structured(&result)["answer"].as_str().expect("answer");
    let half = "x".repeat(BUDGET / 2);
    assert!(
        answer.starts_with(&format!("{half}\n\n[")) && answer.ends_with(&format!("]\n\n{half}")),
        "head and tail fill the budget exactly"
    );
    assert!(
        answer.chars().count() < BUDGET + 300,
        "one short note between"
    );
    let id = job_id(&result);
    let call = format!(
        "job_result {{\"job_id\": \"{id}\", \"offset\": {}, \"limit\": {}}}",
        BUDGET / 2,
        1024 * 1024 - BUDGET
    );
    assert!(
        answer.contains(&call),
        "{}",
        &answer[BUDGET / 2 - 10..BUDGET / 2 + 300]
    );
    assert!(texts(&result)[0].contains(&call), "the text says it too");
    let text_chars: usize = texts(&result).iter().map(|t| t.chars().count()).sum();
    assert!(text_chars < BUDGET + 1000, "{text_chars}");
}

/// How many CLIs of the server `server_pid` are alive: the distinct run markers of its live
/// run processes (a CLI may fork helpers of its own, which carry its run's marker).
fn running_clis(server_pid: i32) -> usize {
    let marker = |pid: i32| platform::environment_value(u32::try_from(pid).ok()?, "CAM_RUN_ID");
    let runs: std::collections::BTreeSet<String> = run_processes_of(server_pid)
        .into_iter()
        .filter_map(marker)
        .collect();
    runs.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_background_jobs_never_run_more_than_the_cap_and_all_complete() {
    const JOBS: usize = 100;
    const CAP: usize = 4;
    let state = temp_dir("jobs-cap");
    let mut server = server_with_state(state.path())
        .env("CAM_MAX_RUNS", CAP.to_string())
        .spawn();
    server.initialize().await;
    let server_pid = server.pid();
    let most = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (most, done) = (most.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let alive = running_clis(server_pid);
                most.fetch_max(alive, std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let mut ids = Vec::with_capacity(JOBS);
    let agents = mcp::agents();
    for n in 0..JOBS {
        let agent = agents[n % 4];
        let started = server
            .call(
                agent,
                json!({"prompt": format!("silent=0.2 answer=job-{n}"), "background": true}),
            )
            .await;
        assert!(!is_error(&started), "{started:#}");
        ids.push(job_id(&started));
    }
    let queued = server
        .call("job_list", json!({"status": "queued", "limit": 200}))
        .await;
    assert!(
        !structured(&queued)["jobs"]
            .as_array()
            .is_some_and(Vec::is_empty),
        "jobs over the cap wait in the queue: {queued:#}"
    );

    let waited = wait_all(&mut server, &ids).await;
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    sampler.join().expect("sampler");
    for (n, id) in ids.iter().enumerate() {
        let job = waited_job(&waited, id);
        assert_eq!(job["status"], "completed", "{job:#}");
        assert!(
            all_text(&waited).contains(&format!("job-{n}")),
            "job {n}'s answer is in the wait's result"
        );
    }
    let most = most.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        most <= CAP,
        "{most} CLIs ran at once, over the cap of {CAP}"
    );
    assert!(most > 0, "the sampler saw the CLIs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_queued_and_a_running_job_leaves_nothing() {
    let tag = unique("jobs-cancel");
    let mut server = Server::builder().env("CAM_MAX_RUNS", "1").spawn();
    server.initialize().await;
    let prompt = format!("hang children=2 session-child tag={tag}");
    let running = server
        .call("codex", json!({"prompt": &prompt, "background": true}))
        .await;
    let queued = server
        .call(
            "claude",
            json!({"prompt": "answer=never", "background": true}),
        )
        .await;
    assert_eq!(structured(&queued)["status"], "queued", "{queued:#}");
    let waiting = server
        .start_call("gemini", json!({"prompt": "answer=my_turn"}), Some("queue"))
        .await;
    wait_for_tagged(&tag, 3).await;
    server
        .wait_for("the queue's progress", |messages| {
            messages
                .iter()
                .find(|m| m["params"]["message"] == "gemini: queued, position 2")
                .cloned()
        })
        .await;

    let cancelled = server
        .call("job_cancel", json!({"job_id": job_id(&queued)}))
        .await;
    assert_eq!(
        structured(&cancelled)["status"],
        "cancelled",
        "{cancelled:#}"
    );
    assert!(all_text(&cancelled).contains("queue"), "{cancelled:#}");

    let cancelled = server
        .call("job_cancel", json!({"job_id": job_id(&running)}))
        .await;
    assert_eq!(
        structured(&cancelled)["status"],
        "cancelled",
        "{cancelled:#}"
    );
    assert!(all_text(&cancelled).contains("job_cancel"), "{cancelled:#}");
    assert_none_tagged(&tag);
    let served = server.result(waiting).await;
    assert_eq!(
        texts(&served)[0],
        "my turn",
        "the queue moved on: {served:#}"
    );
    let again = server
        .call("job_cancel", json!({"job_id": job_id(&running)}))
        .await;
    assert!(all_text(&again).contains("already ended"), "{again:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_cancel_from_a_shell_has_the_owning_server_cancel_the_job() {
    let state = temp_dir("jobs-shell-cancel");
    let tag = unique("jobs-shell-cancel");
    let mut server = server_with_state(state.path()).spawn();
    server.initialize().await;
    let started = server
        .call(
            "claude",
            json!({"prompt": format!("hang children=1 tag={tag}"), "background": true}),
        )
        .await;
    let id = job_id(&started);
    wait_for_tagged(&tag, 1).await;

    let output = tokio::process::Command::from(common::cam_command())
        .args(["jobs", "cancel", &id])
        .env("CAM_STATE_DIR", state.path())
        .output()
        .await
        .expect("run jobs cancel");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains("cancelled"), "{said}");
    assert_none_tagged(&tag);
    let waited = server
        .call("job_wait", json!({"job_ids": [&id], "timeout_secs": 5}))
        .await;
    assert_eq!(
        waited_job(&waited, &id)["status"],
        "cancelled",
        "{waited:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_reads_the_first_servers_finished_jobs() {
    let state = temp_dir("jobs-shared");
    let mut first = server_with_state(state.path()).spawn();
    first.initialize().await;
    let result = first
        .call("opencode", json!({"prompt": "answer=kept_in_the_store"}))
        .await;
    let id = job_id(&result);

    let mut second = server_with_state(state.path()).spawn();
    second.initialize().await;
    let page = second.call("job_result", json!({"job_id": &id})).await;
    assert_eq!(texts(&page)[0], "kept in the store", "{page:#}");
    let listed = second.call("job_list", json!({})).await;
    let jobs = structured(&listed)["jobs"]
        .as_array()
        .expect("jobs")
        .clone();
    assert_eq!(jobs.len(), 1, "{listed:#}");
    assert_eq!(jobs[0]["job_id"], id.as_str());
    assert_eq!(jobs[0]["agent"], "opencode");
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_interrupts_the_running_and_queued_jobs_and_keeps_what_they_had_said() {
    let state = temp_dir("jobs-sigterm");
    let tag = unique("jobs-sigterm");
    let mut server = server_with_state(state.path())
        .env("CAM_MAX_RUNS", "2")
        .spawn();
    server.initialize().await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        // gemini's stream ticks are answer text: a partial answer to keep.
        let started = server
            .call(
                "gemini",
                json!({"prompt": format!("stream=60 tag={tag} children=1"), "background": true}),
            )
            .await;
        ids.push(job_id(&started));
    }
    let queued = job_id(
        &server
            .call(
                "gemini",
                json!({"prompt": "answer=never", "background": true}),
            )
            .await,
    );
    wait_for_tagged(&tag, 2).await;
    let waited = server
        .call("job_wait", json!({"job_ids": &ids, "timeout_secs": 1}))
        .await;
    for id in &ids {
        assert_eq!(waited_job(&waited, id)["status"], "running", "{waited:#}");
    }
    wait_until("both jobs have streamed some of their answer", || {
        ids.iter()
            .all(|id| common::recorded_events(state.path(), id) >= 5)
    })
    .await;
    server.signal(Signal::SIGTERM);
    assert_eq!(
        server.wait_exit(Duration::from_secs(30)).await.code(),
        Some(0)
    );
    assert_none_tagged(&tag);

    let mut next = server_with_state(state.path()).spawn();
    next.initialize().await;
    let all = [ids.clone(), vec![queued.clone()]].concat();
    let waited = wait_all(&mut next, &all).await;
    for id in &ids {
        let job = waited_job(&waited, id);
        assert_eq!(job["status"], "interrupted", "{waited:#}");
        assert!(job["session_id"].is_string(), "resumable: {waited:#}");
        assert!(
            job["answer"].as_str().is_some_and(|a| a.contains("tick")),
            "the partial answer is kept: {waited:#}"
        );
        assert!(
            job["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("SIGTERM")),
            "{waited:#}"
        );
    }
    let job = waited_job(&waited, &queued);
    assert_eq!(job["status"], "interrupted", "{waited:#}");
    assert!(
        job["error"]["hint"]
            .as_str()
            .is_some_and(|hint| hint.contains("call again")),
        "what to do about it: {waited:#}"
    );
}

// A Unix signal; a killed server's runs go with its job objects on Windows (the engine's
// platform::windows tests, under Wine).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_servers_running_job_is_marked_interrupted_by_the_next_server() {
    let state = temp_dir("jobs-sigkill");
    let tag = unique("jobs-sigkill");
    let mut server = server_with_state(state.path()).spawn();
    server.initialize().await;
    let started = server
        .call(
            "codex",
            json!({"prompt": format!("hang tag={tag} children=1"), "background": true}),
        )
        .await;
    let id = job_id(&started);
    wait_for_tagged(&tag, 1).await;
    server.signal(Signal::SIGKILL);
    server.wait_exit(Duration::from_secs(30)).await;
    wait_until("the guardian has killed the run", || {
        common::tagged_pids(&tag).is_empty()
    })
    .await;

    let mut next = server_with_state(state.path()).spawn();
    next.initialize().await;
    let waited = next
        .call("job_wait", json!({"job_ids": [&id], "timeout_secs": 5}))
        .await;
    assert_eq!(
        waited_job(&waited, &id)["status"],
        "interrupted",
        "{waited:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_state_dir_leaves_blocking_calls_working_and_the_job_tools_say_why() {
    let dir = temp_dir("jobs-unusable");
    let not_a_dir = dir.path().join("a-file");
    std::fs::write(&not_a_dir, "not a directory").expect("write");
    let mut server = server_with_state(&not_a_dir.join("state")).spawn();
    server.initialize().await;
    let result = server
        .call("codex", json!({"prompt": "answer=still_here"}))
        .await;
    assert_eq!(texts(&result)[0], "still here", "{result:#}");

    let listed = server.call("job_list", json!({})).await;
    assert!(is_error(&listed), "{listed:#}");
    let message = all_text(&listed);
    assert!(
        message.contains("CAM_STATE_DIR"),
        "says how to fix it: {message}"
    );
    let warnings = server.stderr().matches("job store is unusable").count();
    assert_eq!(warnings, 1, "one warning: {}", server.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_to_appends_the_whole_answer_inside_the_workspace_and_nowhere_else() {
    let workspace = temp_dir("jobs-save-to");
    let mut server = Server::start().await;
    for answer in ["first", "second"] {
        let result = server
            .call(
                "claude",
                json!({"prompt": format!("answer={answer}"), "workspace": workspace.path(),
                       "save_to": "notes/answer.md"}),
            )
            .await;
        assert_eq!(structured(&result)["status"], "completed", "{result:#}");
    }
    let saved = std::fs::read_to_string(workspace.path().join("notes/answer.md")).expect("saved");
    assert_eq!(saved, "firstsecond");

    let refused = server
        .call(
            "claude",
            json!({"prompt": "answer=x", "workspace": workspace.path(), "save_to": "../escape.md"}),
        )
        .await;
    assert!(is_error(&refused), "{refused:#}");
    assert!(
        all_text(&refused).contains("outside the call's workspace"),
        "{refused:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_or_malformed_job_id_is_a_clear_error() {
    let mut server = Server::start().await;
    let malformed = server.call("job_wait", json!({"job_ids": ["42"]})).await;
    assert!(is_error(&malformed), "{malformed:#}");
    assert!(all_text(&malformed).contains("job_"), "{malformed:#}");
    let unknown = server
        .call("job_result", json!({"job_id": "job_aaaaaaaaaaaaaaaa"}))
        .await;
    assert!(is_error(&unknown), "{unknown:#}");
    assert!(
        all_text(&unknown).contains("no job job_aaaaaaaaaaaaaaaa"),
        "{unknown:#}"
    );
    server.ping().await;
}

/// The `_meta` of a 2026-07-28 request whose client declares the tasks extension.
fn tasks_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": mcp::MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    })
}

async fn get_task(server: &mut Server, task_id: &str) -> Value {
    let id = server
        .request(
            "tasks/get",
            json!({"taskId": task_id, "_meta": tasks_meta()}),
        )
        .await;
    server.result(id).await
}

/// `tasks/get` until the task leaves `working`.
async fn task_end(server: &mut Server, task_id: &str) -> Value {
    let deadline = std::time::Instant::now() + common::DEADLINE;
    loop {
        let task = get_task(server, task_id).await;
        if task["status"] != "working" {
            return task;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the task never ended: {task:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_declaring_the_tasks_extension_gets_tasks_backed_by_jobs() {
    let mut server = Server::start().await;
    let params = json!({"name": "codex", "arguments": {"prompt": "silent=1 answer=task_done"},
                        "_meta": tasks_meta()});
    let id = server.request("tools/call", params).await;
    let created = server.result(id).await;
    assert_eq!(created["resultType"], "task", "{created:#}");
    assert_eq!(created["status"], "working", "{created:#}");
    let task_id = created["taskId"].as_str().expect("taskId").to_owned();

    let ended = task_end(&mut server, &task_id).await;
    assert_eq!(ended["status"], "completed", "{ended:#}");
    assert_eq!(
        ended["result"]["content"][0]["text"], "task done",
        "{ended:#}"
    );
    let same_job = server.call("job_result", json!({"job_id": &task_id})).await;
    assert_eq!(texts(&same_job)[0], "task done", "the task is the job");

    let tag = unique("jobs-task-cancel");
    let params = json!({"name": "claude",
                        "arguments": {"prompt": format!("hang children=1 tag={tag}")},
                        "_meta": tasks_meta()});
    let id = server.request("tools/call", params).await;
    let hanging = server.result(id).await["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();
    wait_for_tagged(&tag, 1).await;
    let id = server
        .request(
            "tasks/cancel",
            json!({"taskId": &hanging, "_meta": tasks_meta()}),
        )
        .await;
    server.result(id).await;
    assert_eq!(task_end(&mut server, &hanging).await["status"], "cancelled");
    assert_none_tagged(&tag);

    let id = server
        .request(
            "tasks/get",
            json!({"taskId": "job_aaaaaaaaaaaaaaaa", "_meta": tasks_meta()}),
        )
        .await;
    assert_eq!(server.response(id).await["error"]["code"], -32602);
    let plain = server
        .call("gemini", json!({"prompt": "answer=no_task"}))
        .await;
    assert_eq!(
        texts(&plain)[0],
        "no task",
        "without the extension, a plain result"
    );
}
