//! Asking the person through a client on protocol 2026-07-28, which takes no request from a
//! server: every question goes out as the call's answer, an `InputRequiredResult` (MRTR), and
//! the client's retry brings the person's answer with the sealed `requestState`. A call past
//! the bounds, a delegate's permission question mid-run (the fake claude asks its run's
//! endpoint as claude 2.1.332 does, itself on 2026-07-28), two questions in one call, a
//! `job_wait` and a task carrying a question; a tampered, replayed, foreign or rebound state
//! runs nothing; a question nobody answers in time is refused, denied or parked as when nobody
//! answers an elicitation. No request ever goes from the server to such a client. A
//! 2025-11-25 session still gets an `elicitation/create`, also for a delegate that speaks
//! 2026-07-28 to its endpoint.

use crate::common;
use crate::mcp;
use crate::web;

use std::path::Path;
use std::time::Duration;

use common::{temp_dir, wait_until};
use mcp::{Server, structured};
use serde_json::{Value, json};
use web::Dashboard;

use super::policy::assert_refused_above_ceiling;

const ALLOW: &str = r#"{"action": "accept", "content": {"allow": true}}"#;
const DECLINE: &str = r#"{"action": "decline"}"#;

fn allow() -> Value {
    serde_json::from_str(ALLOW).expect("JSON")
}

fn decline() -> Value {
    serde_json::from_str(DECLINE).expect("JSON")
}

/// A 2026-07-28 request's `_meta`, its client declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": mcp::MODERN_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "modern-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// What a client that can ask the person declares.
fn asks() -> Value {
    json!({"elicitation": {"form": {}}})
}

/// A retry: the state given and the answers under their keys.
struct Retry {
    state: Value,
    responses: Value,
}

impl Retry {
    /// Answer every input request of `asked` (an `InputRequiredResult`) with `answer`.
    fn answering(asked: &Value, answer: &Value) -> Self {
        let responses = asked["inputRequests"]
            .as_object()
            .expect("input requests")
            .keys()
            .map(|key| (key.clone(), answer.clone()))
            .collect();
        Self {
            state: asked["requestState"].clone(),
            responses: Value::Object(responses),
        }
    }
}

/// A 2026-07-28 `tools/call` of `tool`, a retry when `retry` is given: the whole response.
async fn call(server: &mut Server, tool: &str, arguments: &Value, retry: Option<&Retry>) -> Value {
    let mut params = json!({"name": tool, "arguments": arguments, "_meta": meta(asks())});
    if let Some(retry) = retry {
        params["requestState"] = retry.state.clone();
        params["inputResponses"] = retry.responses.clone();
    }
    let id = server.request("tools/call", params).await;
    server.response(id).await
}

/// The result of a response that must have one.
fn result(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("an error: {response:#}"))
}

/// An `InputRequiredResult`'s one question: its key and message.
fn the_question(asked: &Value) -> (String, String) {
    assert_eq!(asked["resultType"], "input_required", "{asked:#}");
    let requests = asked["inputRequests"].as_object().expect("input requests");
    assert_eq!(requests.len(), 1, "{asked:#}");
    let (key, request) = requests.iter().next().expect("one");
    assert_eq!(request["method"], "elicitation/create", "{asked:#}");
    let schema = &request["params"]["requestedSchema"];
    assert_eq!(
        schema["properties"]["allow"]["type"], "boolean",
        "{asked:#}"
    );
    assert!(asked["requestState"].is_string(), "{asked:#}");
    let message = request["params"]["message"].as_str().unwrap_or_default();
    (key.clone(), message.to_owned())
}

/// No request ever went from the server to the client: only responses and notifications.
fn assert_never_requested(server: &Server) {
    let requests: Vec<_> = server
        .messages()
        .into_iter()
        .filter(|m| m.get("method").is_some() && m.get("id").is_some())
        .collect();
    assert!(
        requests.is_empty(),
        "the server sent requests: {requests:#?}"
    );
}

/// A server bounded to `root` at workspace-write, with `env`, unconfined (the fake records
/// what it saw outside the workspace).
fn bounded_server(root: &Path, env: &[(&str, &str)]) -> Server {
    let builder = Server::builder()
        .env("CAM_SANDBOX", "off")
        .env("CAM_ALLOWED_ROOTS", root)
        .env("CAM_MAX_PERMISSION", "workspace-write");
    env.iter()
        .fold(builder, |builder, (key, value)| builder.env(key, value))
        .spawn()
}

fn above_ceiling(record: &Path, dir: &Path) -> Value {
    json!({
        "prompt": format!("argv-out={}", record.display()),
        "workspace": dir,
        "permission": "unlimited",
    })
}

// ---------------------------------------------------------------------------------------------
// A call past the bounds

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_the_bounds_answers_with_the_question_and_runs_once_the_person_allows_it() {
    let (dir, state) = (temp_dir("mrtr-allow"), temp_dir("mrtr-allow-state"));
    let record = dir.path().join("argv.json");
    let state_dir = state.path().display().to_string();
    let mut server = bounded_server(dir.path(), &[("CAM_STATE_DIR", &state_dir)]);
    let arguments = above_ceiling(&record, dir.path());

    let asked = call(&mut server, "codex", &arguments, None).await;
    let asked = result(&asked);
    let (_, message) = the_question(asked);
    for expected in ["codex", "unlimited", "workspace-write", "argv-out="] {
        assert!(message.contains(expected), "{expected} in {message}");
    }
    assert!(!record.exists(), "nothing runs before the person answered");

    let retry = Retry::answering(asked, &allow());
    let response = call(&mut server, "codex", &arguments, Some(&retry)).await;
    let done = result(&response);
    assert_eq!(structured(done)["status"], "completed", "{done:#}");
    let argv = std::fs::read_to_string(&record).expect("the fake ran");
    assert!(argv.contains("danger-full-access"), "at unlimited: {argv}");
    let id = structured(done)["job_id"].as_str().expect("job_id");
    let job = common::shown_job(state.path(), id).expect("the job");
    let allowed = job["allowed_past"].as_str().unwrap_or_default();
    assert!(allowed.contains("permission unlimited"), "{job:#}");
    assert_never_requested(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decline_or_an_unticked_answer_refuses_as_before_and_runs_nothing() {
    let dir = temp_dir("mrtr-decline");
    let record = dir.path().join("argv.json");
    let mut server = bounded_server(dir.path(), &[]);
    let arguments = above_ceiling(&record, dir.path());
    let unticked = json!({"action": "accept", "content": {"allow": false}});
    for answer in [
        decline(),
        unticked,
        json!({"action": "cancel"}),
        json!("yes"),
    ] {
        let asked = call(&mut server, "codex", &arguments, None).await;
        let retry = Retry::answering(result(&asked), &answer);
        let refused = call(&mut server, "codex", &arguments, Some(&retry)).await;
        assert_refused_above_ceiling(result(&refused), &record);
    }
    assert_never_requested(&server);
}

/// The response to a retry is a JSON-RPC error saying the state was refused.
fn assert_state_refused(response: &Value) {
    assert_eq!(response["error"]["code"], -32602, "{response:#}");
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("requestState refused"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_replayed_foreign_or_rebound_state_runs_nothing() {
    let dir = temp_dir("mrtr-tamper");
    let record = dir.path().join("argv.json");
    let mut server = bounded_server(dir.path(), &[]);
    // Another server: a key of its own.
    let mut elsewhere = bounded_server(dir.path(), &[]);
    let arguments = above_ceiling(&record, dir.path());
    let asked = call(&mut server, "codex", &arguments, None).await;
    let retry = Retry::answering(result(&asked), &allow());

    let state = retry.state.as_str().expect("a string");
    let middle = state.len() / 2;
    let flipped = if &state[middle..=middle] == "A" {
        "B"
    } else {
        "A"
    };
    let tampered = format!("{}{flipped}{}", &state[..middle], &state[middle + 1..]);
    let foreign_asked = call(&mut elsewhere, "codex", &arguments, None).await;
    let foreign = result(&foreign_asked)["requestState"].clone();
    let mut rebound = arguments.clone();
    rebound["prompt"] = json!(format!("argv-out={} more", record.display()));
    for (state, arguments, tool) in [
        (json!(tampered), &arguments, "codex"),
        (foreign, &arguments, "codex"),
        (json!("made-up"), &arguments, "codex"),
        (retry.state.clone(), &rebound, "codex"),
        (retry.state.clone(), &arguments, "claude"),
    ] {
        let forged = Retry {
            state,
            responses: retry.responses.clone(),
        };
        assert_state_refused(&call(&mut server, tool, arguments, Some(&forged)).await);
    }
    assert!(!record.exists(), "a refused state started the CLI");

    let first = call(&mut server, "codex", &arguments, Some(&retry)).await;
    assert_eq!(structured(result(&first))["status"], "completed");
    std::fs::remove_file(&record).expect("the first retry ran");
    let replayed = call(&mut server, "codex", &arguments, Some(&retry)).await;
    assert_state_refused(&replayed);
    assert!(!record.exists(), "a replayed state ran the call again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_with_the_state_but_no_answer_asks_again() {
    let dir = temp_dir("mrtr-again");
    let record = dir.path().join("argv.json");
    let mut server = bounded_server(dir.path(), &[]);
    let arguments = above_ceiling(&record, dir.path());
    let asked = call(&mut server, "codex", &arguments, None).await;
    let unanswered = Retry {
        state: result(&asked)["requestState"].clone(),
        responses: json!({"something_else": allow()}),
    };
    let again = call(&mut server, "codex", &arguments, Some(&unanswered)).await;
    let again = result(&again);
    the_question(again);
    assert_ne!(
        again["requestState"], unanswered.state,
        "a state of its own"
    );
    assert!(!record.exists());
    let retry = Retry::answering(again, &allow());
    let done = call(&mut server, "codex", &arguments, Some(&retry)).await;
    assert_eq!(structured(result(&done))["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bounds_question_nobody_answers_in_time_is_refused_or_parked_for_the_dashboard() {
    let (dir, state) = (temp_dir("mrtr-lapse"), temp_dir("mrtr-lapse-state"));
    let state_dir = state.path().display().to_string();
    let record = dir.path().join("argv.json");
    let arguments = above_ceiling(&record, dir.path());
    let mut refusing = bounded_server(dir.path(), &[("CAM_ASK_TIMEOUT_SECS", "1")]);
    let asked = call(&mut refusing, "codex", &arguments, None).await;
    let late = Retry::answering(result(&asked), &allow());
    wait_until("the question lapsed", || {
        refusing.stderr().contains("did not answer within")
    })
    .await;
    let refused = call(&mut refusing, "codex", &arguments, Some(&late)).await;
    assert_refused_above_ceiling(result(&refused), &record);

    let env = [
        ("CAM_ASK_TIMEOUT_SECS", "1"),
        ("CAM_PARK_QUESTIONS", "1"),
        ("CAM_STATE_DIR", state_dir.as_str()),
    ];
    let mut parking = bounded_server(dir.path(), &env);
    let dashboard = Dashboard::start(state.path()).await;
    let cookie = dashboard.log_in().await;
    let asked = call(&mut parking, "codex", &arguments, None).await;
    let late = Retry::answering(result(&asked), &allow());
    wait_until("the question lapsed", || {
        parking.stderr().contains("did not answer within")
    })
    .await;
    let parked = call(&mut parking, "codex", &arguments, Some(&late)).await;
    let report = structured(result(&parked)).clone();
    assert_eq!(report["status"], "needs_input", "{report:#}");
    assert!(
        !record.exists(),
        "a parked call ran before the person allowed it"
    );
    let id = report["job_id"].as_str().expect("job_id");
    let path = format!("/jobs/{id}/questions/1/allow");
    dashboard.post_from_page(&cookie, id, &path).await;
    wait_until("the allowed call ran", || record.exists()).await;
    assert_never_requested(&refusing);
    assert_never_requested(&parking);
}

// ---------------------------------------------------------------------------------------------
// A delegate's own permission questions

/// A claude call at read-only in `workspace` whose fake asks its endpoint before each of
/// `tools`.
fn asking_claude(tools: &str, workspace: &Path) -> Value {
    json!({"prompt": format!("ask={tools}"), "workspace": workspace})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegates_question_mid_run_is_the_calls_answer_and_its_retry_hands_the_answer_over() {
    let dir = temp_dir("mrtr-delegate");
    let mut server = bounded_server(dir.path(), &[]);
    let arguments = asking_claude("Bash", dir.path());
    let asked = call(&mut server, "claude", &arguments, None).await;
    let (_, message) = the_question(result(&asked));
    assert!(message.contains("claude's Bash"), "{message}");

    let retry = Retry::answering(result(&asked), &allow());
    let done = call(&mut server, "claude", &arguments, Some(&retry)).await;
    let report = structured(result(&done));
    assert_eq!(report["status"], "completed", "{report:#}");
    assert_eq!(report["answer"], "Bash: allow", "{report:#}");
    assert_never_requested(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_questions_in_one_call_the_bounds_then_the_delegates_each_answered_by_a_retry() {
    let (root, outside) = (temp_dir("mrtr-two"), temp_dir("mrtr-two-outside"));
    let mut server = bounded_server(root.path(), &[]);
    let arguments = asking_claude("Bash,WebFetch", outside.path());

    let bounds = call(&mut server, "claude", &arguments, None).await;
    let (_, message) = the_question(result(&bounds));
    assert!(
        message.contains("outside the directories you allow"),
        "{message}"
    );
    let retry = Retry::answering(result(&bounds), &allow());
    let first = call(&mut server, "claude", &arguments, Some(&retry)).await;
    let (_, message) = the_question(result(&first));
    assert!(message.contains("claude's Bash"), "{message}");
    let retry = Retry::answering(result(&first), &allow());
    let second = call(&mut server, "claude", &arguments, Some(&retry)).await;
    let (_, message) = the_question(result(&second));
    assert!(message.contains("claude's WebFetch"), "{message}");
    let retry = Retry::answering(result(&second), &decline());
    let done = call(&mut server, "claude", &arguments, Some(&retry)).await;
    let report = structured(result(&done));
    assert_eq!(
        report["answer"], "Bash: allow; WebFetch: deny",
        "{report:#}"
    );
    assert_never_requested(&server);
}

/// Job `id`'s `job_result` (its answer in `text`), once it has ended.
async fn ended(server: &mut Server, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + common::DEADLINE;
    loop {
        let report = call(server, "job_result", &json!({"job_id": id}), None).await;
        let report = structured(result(&report)).clone();
        if !["queued", "running", "needs_input"]
            .contains(&report["status"].as_str().unwrap_or_default())
        {
            return report;
        }
        assert!(tokio::time::Instant::now() < deadline, "{report:#}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The newest job's id (`job_list` lists the newest first).
async fn newest_job(server: &mut Server) -> String {
    let listed = call(server, "job_list", &json!({}), None).await;
    structured(result(&listed))["jobs"][0]["job_id"]
        .as_str()
        .expect("a job")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegates_question_whose_retry_never_comes_is_denied_or_parked_as_configured() {
    let (dir, state) = (temp_dir("mrtr-noretry"), temp_dir("mrtr-noretry-state"));
    let state_dir = state.path().display().to_string();
    let mut denying = bounded_server(dir.path(), &[("CAM_ASK_TIMEOUT_SECS", "2")]);
    let asked = call(
        &mut denying,
        "claude",
        &asking_claude("Bash", dir.path()),
        None,
    )
    .await;
    the_question(result(&asked));
    let id = newest_job(&mut denying).await;
    let report = ended(&mut denying, &id).await;
    assert_eq!(report["text"], "Bash: deny", "{report:#}");
    let transcript = json!({"job_id": id, "transcript": true, "limit": 10_000});
    let page = call(&mut denying, "job_result", &transcript, None).await;
    let events = structured(result(&page))["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(events.contains(r#""answer":"timed_out""#), "{events}");

    let env = [
        ("CAM_ASK_TIMEOUT_SECS", "2"),
        ("CAM_PARK_QUESTIONS", "1"),
        ("CAM_STATE_DIR", state_dir.as_str()),
    ];
    let mut parking = bounded_server(dir.path(), &env);
    let dashboard = Dashboard::start(state.path()).await;
    let cookie = dashboard.log_in().await;
    let asked = call(
        &mut parking,
        "claude",
        &asking_claude("Bash", dir.path()),
        None,
    )
    .await;
    the_question(result(&asked));
    let id = newest_job(&mut parking).await;
    wait_until("the question is parked", || {
        common::shown_job(state.path(), &id).is_some_and(|job| job["status"] == "needs_input")
    })
    .await;
    let path = format!("/jobs/{id}/questions/1/allow");
    dashboard.post_from_page(&cookie, &id, &path).await;
    let report = ended(&mut parking, &id).await;
    assert_eq!(report["text"], "Bash: allow", "{report:#}");
    assert_never_requested(&denying);
    assert_never_requested(&parking);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_wait_carries_the_questions_of_the_jobs_it_waits_for() {
    let dir = temp_dir("mrtr-wait");
    let mut server = bounded_server(dir.path(), &[]);
    let mut arguments = asking_claude("Bash", dir.path());
    arguments["background"] = json!(true);
    let started = call(&mut server, "claude", &arguments, None).await;
    let id = structured(result(&started))["job_id"]
        .as_str()
        .expect("job_id")
        .to_owned();
    let wait = json!({"job_ids": [id], "timeout_secs": 120});
    let asked = call(&mut server, "job_wait", &wait, None).await;
    let (_, message) = the_question(result(&asked));
    assert!(message.contains("claude's Bash"), "{message}");
    let retry = Retry::answering(result(&asked), &allow());
    let waited = call(&mut server, "job_wait", &wait, Some(&retry)).await;
    let report = &structured(result(&waited))["jobs"][0];
    assert_eq!(report["answer"], "Bash: allow", "{report:#}");
    assert_never_requested(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_with_a_question_is_input_required_until_tasks_update_brings_the_answer() {
    let dir = temp_dir("mrtr-task");
    let mut server = bounded_server(dir.path(), &[]);
    let capabilities = json!({"elicitation": {"form": {}},
                              "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let params = json!({"name": "claude", "arguments": asking_claude("Bash", dir.path()),
                        "_meta": meta(capabilities.clone())});
    let id = server.request("tools/call", params).await;
    let task_id = server.result(id).await["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let task = task_until(&mut server, &task_id, &capabilities, "input_required").await;
    let requests = task["inputRequests"].as_object().expect("input requests");
    let (key, request) = requests.iter().next().expect("a question");
    let message = request["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("claude's Bash"), "{message}");
    let update = json!({"taskId": task_id, "inputResponses": {key.clone(): allow()},
                        "_meta": meta(capabilities.clone())});
    let id = server.request("tasks/update", update).await;
    server.result(id).await;
    let task = task_until(&mut server, &task_id, &capabilities, "completed").await;
    assert_eq!(
        task["result"]["structuredContent"]["answer"], "Bash: allow",
        "{task:#}"
    );
    assert_never_requested(&server);
}

/// `tasks/get` until the task is `status`.
async fn task_until(
    server: &mut Server,
    task_id: &str,
    capabilities: &Value,
    status: &str,
) -> Value {
    let deadline = tokio::time::Instant::now() + common::DEADLINE;
    loop {
        let params = json!({"taskId": task_id, "_meta": meta(capabilities.clone())});
        let id = server.request("tasks/get", params).await;
        let task = server.result(id).await;
        if task["status"] == status {
            return task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never {status}: {task:#}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// A 2025-11-25 session

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_asked_by_elicitation_also_for_a_delegate_speaking_2026_to_its_endpoint() {
    let dir = temp_dir("legacy-delegate");
    let mut server = bounded_server(dir.path(), &[]);
    server
        .initialize_declaring(mcp::LEGACY_VERSION, asks())
        .await;
    let call = server
        .start_call("claude", asking_claude("Bash", dir.path()), None)
        .await;
    let question = server.server_request("elicitation/create", &[]).await;
    let message = question["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("claude's Bash"), "{message}");
    server.respond(&question["id"], allow()).await;
    let done = server.result(call).await;
    assert_eq!(structured(&done)["answer"], "Bash: allow", "{done:#}");
}
