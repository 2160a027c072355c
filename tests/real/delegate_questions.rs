//! A delegate's own permission questions reach the person: the real claude (against the mock
//! model) runs through the server at `read-only`, its model asks for a shell command claude
//! would refuse headless, claude asks the run's private endpoint (`--permission-prompt-tool`),
//! and the question arrives at this client as an elicitation. Accept: the command runs (its
//! output reaches the answer). Decline: it does not, and the answer says what was denied. A
//! file edit a read-only call may not make is denied without asking. Once the run is over,
//! its endpoint refuses connections. Each question and its answer is an event of the job's
//! transcript (`job_result transcript: true`): asked and answered before the command's result,
//! saying who answered. With `--park-questions`, a question nobody can be asked through the
//! client (this one declares no elicitation) waits, its job `needs_input` as `job_wait` and the
//! dashboard show, until the person answers on the job's dashboard page, also in a real
//! browser. Skips when claude is not installed (see tests/real).

use crate::common;
use crate::mcp;
use crate::real;
use crate::web;

use std::time::Duration;

use cli_agent_engine::clis;
use common::{temp_dir, wait_until};
use mcp::{Builder, Server, is_error};
use real::{MockModel, Retries, Sandbox};
use serde_json::{Value, json};
use tempfile::TempDir;
use web::browser::Browser;
use web::{Dashboard, Request, background};

const ELICIT: &str = "elicitation/create";
/// A command claude does not count as read-only (it lets `expr` alone run unasked), whose
/// output the prompt does not contain.
const SHELL: &str = "RUN_SHELL: sh -c \"expr 6 '*' 7\"";

/// The mock model, claude's sandbox and a server for claude in it, still to be spawned.
fn claude_server() -> Option<(MockModel, Sandbox, Builder)> {
    let bin = real::installed(clis::CLAUDE)?;
    let mock = MockModel::start();
    let sandbox = Sandbox::new(clis::CLAUDE, &bin, mock.port, Retries::Shortened);
    let builder = sandbox
        .env()
        .iter()
        .fold(Server::builder(), |builder, (key, value)| {
            builder.env(key, value)
        })
        .env(&clis::CLAUDE.env_var("BIN"), &sandbox.wrapper)
        .env("CAM_ASK_TIMEOUT_SECS", "120")
        .cwd(&sandbox.workspace);
    Some((mock, sandbox, builder))
}

/// The mock model, claude's sandbox and a server whose client can be asked.
async fn serve() -> Option<(MockModel, Sandbox, Server)> {
    let (mock, sandbox, builder) = claude_server()?;
    let mut server = builder.spawn();
    server
        .initialize_declaring(mcp::LEGACY_VERSION, json!({"elicitation": {"form": {}}}))
        .await;
    Some((mock, sandbox, server))
}

/// The events of job `result`'s transcript, in order.
async fn transcript(server: &mut Server, result: &Value) -> Vec<Value> {
    let id = &result["structuredContent"]["job_id"];
    let arguments = json!({"job_id": id, "transcript": true, "limit": 10_000});
    let page = server.call("job_result", arguments).await;
    let lines = page["structuredContent"]["text"]
        .as_str()
        .unwrap_or_default();
    let events = lines
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"));
    events.collect()
}

/// The one question in `events`, checked to come before the turn ends; `before` is the
/// `type` of an event the answer must precede as well (the tool's result, when it ran).
fn the_question<'a>(events: &'a [Value], before: &[&str]) -> &'a Value {
    let at = |kind: &str| events.iter().position(|event| event["type"] == kind);
    let questions: Vec<_> = events.iter().filter(|e| e["type"] == "question").collect();
    assert_eq!(questions.len(), 1, "one question: {events:#?}");
    let asked = at("question").expect("asked");
    for kind in before.iter().chain(&["turn_completed"]) {
        let then = at(kind).unwrap_or_else(|| panic!("no {kind}: {events:#?}"));
        assert!(
            asked < then,
            "the question comes before {kind}: {events:#?}"
        );
    }
    questions[0]
}

fn answer(result: &Value) -> String {
    assert!(!is_error(result), "{result:#}");
    result["structuredContent"]["answer"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Call claude with `prompt` at read-only, answer its one question with `reply`, and return
/// the question and the call's result.
async fn call_answering(server: &mut Server, prompt: &str, reply: Value) -> (Value, Value) {
    let answered = asked(server);
    let call = server
        .start_call("claude", json!({"prompt": prompt}), None)
        .await;
    let question = server.server_request(ELICIT, &answered).await;
    progress_says(
        server,
        "asking the person through cli-agent-mcp-tests: claude's Bash",
    )
    .await;
    server.respond(&question["id"], reply).await;
    (question, server.result(call).await)
}

/// Waits until the progress line of the newest job says `said` (the store's copy of it is
/// refreshed every half second).
async fn progress_says(server: &mut Server, said: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let listed = server.call("job_list", json!({"limit": 1})).await;
        let job = &listed["structuredContent"]["jobs"][0];
        if job["progress"]
            .as_str()
            .is_some_and(|line| line.contains(said))
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the progress never said {said:?}: {job:#}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The ids of the questions the server has sent so far.
fn asked(server: &Server) -> Vec<Value> {
    let messages = server.messages();
    let questions = messages.iter().filter(|m| m["method"] == ELICIT);
    questions.map(|m| m["id"].clone()).collect()
}

/// The address of every question endpoint the server opened, from its log.
fn endpoints(server: &Server) -> Vec<String> {
    let log = server.stderr();
    let urls = log.split("url=http://").skip(1);
    let addresses = urls.filter_map(|rest| rest.split('/').next());
    addresses.map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claudes_permission_questions_are_asked_of_the_person_and_the_answer_holds() {
    let Some((_mock, _sandbox, mut server)) = serve().await else {
        return;
    };
    let allow = json!({"action": "accept", "content": {"allow": true}});
    let (question, result) = call_answering(&mut server, SHELL, allow).await;
    let message = question["params"]["message"].as_str().unwrap_or_default();
    for expected in ["claude", "Bash", "expr 6", "read-only"] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }
    assert!(answer(&result).contains("tool said: 42"), "{result:#}");
    let events = transcript(&mut server, &result).await;
    let allowed = the_question(&events, &["tool_finished"]);
    assert_eq!(allowed["about"], "tool_permission", "{allowed:#}");
    assert_eq!(allowed["tool"], "Bash", "{allowed:#}");
    assert!(
        allowed["input"].as_str().unwrap().contains("expr 6"),
        "{allowed:#}"
    );
    assert_eq!(allowed["answer"], "allowed", "{allowed:#}");
    assert_eq!(allowed["answered_by"], "cli-agent-mcp-tests", "{allowed:#}");

    let decline = json!({"action": "decline"});
    let (_, result) = call_answering(&mut server, SHELL, decline).await;
    let events = transcript(&mut server, &result).await;
    let declined = the_question(&events, &[]);
    assert_eq!(
        (&declined["tool"], &declined["answer"]),
        (&json!("Bash"), &json!("declined"))
    );
    assert_eq!(
        declined["answered_by"], "cli-agent-mcp-tests",
        "{declined:#}"
    );
    let said = answer(&result);
    assert!(
        !said.contains("tool said: 42"),
        "a declined command ran: {said}"
    );
    for expected in [
        "denied claude's Bash",
        "the person declined",
        "higher permission level",
    ] {
        assert!(said.contains(expected), "{expected:?} in {said}");
    }
    let warnings = result["structuredContent"]["warnings"].to_string();
    assert!(
        warnings.contains("cli-agent-mcp denied claude's Bash")
            && warnings.contains("the person declined"),
        "the result names the denial, whatever the agent says: {warnings}"
    );

    let before = asked(&server).len();
    let result = server
        .call("claude", json!({"prompt": "WRITE_FILE: notes.txt hi"}))
        .await;
    let said = answer(&result);
    assert!(said.contains("a read-only call edits no files"), "{said}");
    assert_eq!(asked(&server).len(), before, "a forbidden edit was asked");
    let events = transcript(&mut server, &result).await;
    let unasked = the_question(&events, &[]);
    assert_eq!(unasked["answer"], "denied_without_asking", "{unasked:#}");
    assert_eq!(unasked["answered_by"], Value::Null, "{unasked:#}");
    assert_eq!(
        unasked["why"], "a read-only call edits no files",
        "{unasked:#}"
    );

    let opened = endpoints(&server);
    assert_eq!(opened.len(), 3, "one endpoint per run: {opened:?}");
    for address in opened {
        wait_until("the finished run's endpoint refuses connections", || {
            std::net::TcpStream::connect(&address).is_err()
        })
        .await;
    }
}

/// A server parking the questions of a client that cannot be asked, the dashboard on its
/// store, and what they need alive.
struct Parking {
    server: Server,
    dashboard: Dashboard,
    _state: TempDir,
    _claude: (MockModel, Sandbox),
}

async fn serve_parking() -> Option<Parking> {
    let (mock, sandbox, builder) = claude_server()?;
    let state = temp_dir("park-questions");
    let mut server = builder
        .env("CAM_STATE_DIR", state.path())
        .arg("--park-questions")
        .spawn();
    server.initialize().await;
    let dashboard = Dashboard::start(state.path()).await;
    Some(Parking {
        server,
        dashboard,
        _state: state,
        _claude: (mock, sandbox),
    })
}

/// `job_wait` on job `id` until it returns (early, once the job waits on the person): the
/// job's report and the text for the model.
async fn wait_on(server: &mut Server, id: &str) -> (Value, String) {
    let arguments = json!({"job_ids": [id], "timeout_secs": 600});
    let waited = server.call("job_wait", arguments).await;
    assert!(!is_error(&waited), "{waited:#}");
    let text = waited["content"][0]["text"].as_str().unwrap_or_default();
    (
        waited["structuredContent"]["jobs"][0].clone(),
        text.to_owned(),
    )
}

/// Start claude on `SHELL` in the background; `job_wait` returns as it starts to wait on the
/// person, saying what it asks and who answers; its page shows the question. The job's id.
async fn parked_job(server: &mut Server, dashboard: &Dashboard, cookie: &str) -> String {
    let id = background(server, "claude", SHELL).await;
    let (report, said) = wait_on(server, &id).await;
    assert_eq!(report["status"], "needs_input", "{report:#}");
    let asked = report["waiting_for"].as_str().unwrap_or_default();
    for expected in [
        "claude's Bash",
        "expr 6",
        "Not asked through the client",
        "read-only",
    ] {
        assert!(asked.contains(expected), "{expected:?} in {report:#}");
    }
    for expected in ["waits for the person", "dashboard", "No tool answers it"] {
        assert!(said.contains(expected), "{expected:?} in {said}");
    }
    let request = Request::get(&format!("/jobs/{id}/events")).cookie(cookie);
    let mut feed = dashboard.feed(&request).await;
    let shown = feed
        .wait_for("the job waiting in its page's feed", |name, data| {
            let job = &data["job"];
            (name == "job" && job["status"] == "needs_input").then(|| job["waiting_for"].clone())
        })
        .await;
    assert_eq!(shown["number"], 1, "{shown:#}");
    assert!(
        shown["asked"]
            .as_str()
            .unwrap_or_default()
            .contains("expr 6"),
        "{shown:#}"
    );
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_park_questions_a_question_nobody_can_be_asked_waits_for_the_dashboard() {
    let Some(parking) = serve_parking().await else {
        return;
    };
    let (mut server, dashboard) = (parking.server, parking.dashboard);
    let cookie = dashboard.log_in().await;

    let id = parked_job(&mut server, &dashboard, &cookie).await;
    let answered = dashboard
        .post_from_page(&cookie, &id, &format!("/jobs/{id}/questions/1/allow"))
        .await;
    assert_eq!(answered.json()["result"], "answered", "{answered:?}");
    let again = dashboard
        .post_from_page(&cookie, &id, &format!("/jobs/{id}/questions/1/decline"))
        .await;
    assert_eq!(again.json()["result"], "already_settled", "{again:?}");
    let (report, _) = wait_on(&mut server, &id).await;
    assert_eq!(report["status"], "completed", "{report:#}");
    assert!(
        report["answer"]
            .as_str()
            .unwrap_or_default()
            .contains("tool said: 42"),
        "the allowed command ran: {report:#}"
    );
    let result = json!({"structuredContent": {"job_id": id}});
    let events = transcript(&mut server, &result).await;
    let allowed = the_question(&events, &["tool_finished"]);
    assert_eq!(
        (&allowed["answer"], &allowed["answered_by"]),
        (&json!("allowed"), &json!("the dashboard")),
        "{allowed:#}"
    );

    let id = parked_job(&mut server, &dashboard, &cookie).await;
    let declined = dashboard
        .post_from_page(&cookie, &id, &format!("/jobs/{id}/questions/1/decline"))
        .await;
    assert_eq!(declined.json()["result"], "answered", "{declined:?}");
    let (report, _) = wait_on(&mut server, &id).await;
    let said = report["answer"].as_str().unwrap_or_default();
    assert!(
        !said.contains("tool said: 42"),
        "a declined command ran: {report:#}"
    );
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("denied claude's Bash")
            && warnings.contains("the person declined on the dashboard"),
        "{report:#}"
    );

    let id = parked_job(&mut server, &dashboard, &cookie).await;
    let cancelled = server.call("job_cancel", json!({"job_id": id})).await;
    assert!(!is_error(&cancelled), "{cancelled:#}");
    let (report, _) = wait_on(&mut server, &id).await;
    assert_eq!(report["status"], "cancelled", "{report:#}");
    let late = dashboard
        .post_from_page(&cookie, &id, &format!("/jobs/{id}/questions/1/allow"))
        .await;
    assert_eq!(late.json()["result"], "already_settled", "{late:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_the_person_allows_a_parked_question_from_the_jobs_page() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let Some(parking) = serve_parking().await else {
        return;
    };
    let (mut server, dashboard) = (parking.server, parking.dashboard);
    let id = background(&mut server, "claude", SHELL).await;
    let (report, _) = wait_on(&mut server, &id).await;
    assert_eq!(report["status"], "needs_input", "{report:#}");

    let url = dashboard.url();
    let env = [
        ("DASHBOARD_URL", url.as_str()),
        ("JOB_ID", &id),
        ("ASKED", "expr 6"),
    ];
    let steps = [
        "01-list-shows-the-job-waiting",
        "02-job-page-shows-the-question",
        "03-allow-lets-the-job-go-on",
    ];
    let context = || format!("server:\n{}", server.stderr());
    browser
        .run("question.mjs", &env, "parked-question", &steps, context)
        .await;
    let (report, _) = wait_on(&mut server, &id).await;
    let said = report["answer"].as_str().unwrap_or_default();
    assert!(said.contains("tool said: 42"), "{report:#}");
}
