//! `cli-agent-mcp dashboard` end to end, through the real binary: who may look (the one-time
//! token, the session cookie, the Host, the CSRF value of a POST), the live feed of a job
//! started over MCP by a server sharing the store, a job's page (its answer rendered from
//! markdown with the HTML in it escaped, its error), a cancel through the owning server, an
//! isolated job's changes (its diff escaped, apply and discard behind the same guard as
//! cancel, a conflicting apply refused naming the file, the worktrees' disk use), an in-place
//! job's revert button, a job the person let past the bounds (what, and the question and
//! answer first among its events), and the end on SIGTERM with feeds open.

use crate::common;
use crate::mcp;
use crate::web;

use std::path::Path;

use common::{assert_none_tagged, temp_dir, unique};
use mcp::Server;
use serde_json::{Value, json};
use tempfile::TempDir;
use web::{Dashboard, Feed, GitRepo, Request, background, server_on, streaming_job};

/// A job's record in a feed message, if the message carries it.
fn job_in<'a>(name: &str, data: &'a Value, id: &str) -> Option<&'a Value> {
    match name {
        "snapshot" | "changed" => data["jobs"].as_array()?.iter().find(|job| job["id"] == id),
        "job" => Some(&data["job"]).filter(|job| job["id"] == id),
        _ => None,
    }
}

/// Reads job `id`'s page feed to its end: the job's last record, and its events.
async fn ended(feed: &mut Feed, id: &str) -> (Value, Vec<Value>) {
    feed.wait_for("the end of the feed", |name, _| {
        (name == "end").then_some(())
    })
    .await;
    let job = feed
        .messages
        .iter()
        .rev()
        .find_map(|(name, data)| job_in(name, data, id))
        .expect("the job's record")
        .clone();
    let events = feed
        .messages
        .iter()
        .filter(|(name, _)| name == "lines")
        .flat_map(|(_, data)| data["text"].as_str().unwrap().lines())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (job, events)
}

/// A server and a dashboard on one store, a background job, and the feed of its page.
struct JobPage {
    dashboard: Dashboard,
    cookie: String,
    id: String,
    feed: Feed,
    _server: Server,
    _state: TempDir,
}

impl JobPage {
    async fn open(agent: &str, prompt: &str) -> Self {
        let state = temp_dir("dash-job");
        let mut server = server_on(state.path()).await;
        let id = background(&mut server, agent, prompt).await;
        let dashboard = Dashboard::start(state.path()).await;
        let cookie = dashboard.log_in().await;
        let feed = dashboard
            .feed(&Request::get(&format!("/jobs/{id}/events")).cookie(&cookie))
            .await;
        Self {
            dashboard,
            cookie,
            id,
            feed,
            _server: server,
            _state: state,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_token_logs_in_one_browser_once_and_every_page_needs_its_cookie() {
    let state = temp_dir("dash-auth");
    let dashboard = Dashboard::start(state.path()).await;
    assert_eq!(dashboard.token.len(), 64, "{}", dashboard.token);

    for path in ["/", "/events", "/jobs/job_aaaaaaaaaaaaaaaa", "/nothing"] {
        let response = dashboard.send(&Request::get(path)).await;
        assert_eq!(response.status, 401, "{path}: {response:?}");
        assert!(
            response.body.contains("printed"),
            "the 401 page says to use the printed URL: {}",
            response.body
        );
    }
    let wrong = format!("/?token={}", "0".repeat(64));
    assert_eq!(dashboard.send(&Request::get(&wrong)).await.status, 401);

    let cookie = dashboard.log_in().await;
    let reuse = dashboard
        .send(&Request::get(&format!("/?token={}", dashboard.token)))
        .await;
    assert_eq!(reuse.status, 401, "the token works once: {reuse:?}");
    let reopened = dashboard
        .send(&Request::get(&format!("/?token={}", dashboard.token)).cookie(&cookie))
        .await;
    assert_eq!(
        reopened.status, 303,
        "the browser it logged in: {reopened:?}"
    );

    let page = dashboard.send(&Request::get("/").cookie(&cookie)).await;
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.body.contains("/assets/list.js"), "{}", page.body);
    assert!(
        page.header("content-security-policy")
            .is_some_and(|policy| policy.contains("script-src 'self'")),
        "{page:?}"
    );
    let forged = cookie.replace(|c: char| c.is_ascii_hexdigit() && c != '0', "0");
    let forged = dashboard.send(&Request::get("/").cookie(&forged)).await;
    assert_eq!(forged.status, 401, "{forged:?}");

    // DNS rebinding: the right cookie under a name that is not ours.
    let port = dashboard.host.rsplit(':').next().unwrap();
    for host in [format!("evil.example:{port}"), "127.0.0.1:1".to_owned()] {
        let rebound = dashboard
            .send(&Request::get("/").cookie(&cookie).host(&host))
            .await;
        assert_eq!(rebound.status, 403, "{host}: {rebound:?}");
    }
    let by_name = Request::get("/")
        .cookie(&cookie)
        .host(&format!("localhost:{port}"));
    assert_eq!(dashboard.send(&by_name).await.status, 200);

    let style = dashboard.send(&Request::get("/assets/style.css")).await;
    assert_eq!(style.status, 200, "assets need no session: {style:?}");
    assert_eq!(
        style.header("content-type"),
        Some("text/css; charset=utf-8")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_started_over_mcp_appears_in_the_feed_and_is_cancelled_from_its_page() {
    let state = temp_dir("dash-feed");
    let mut server = server_on(state.path()).await;
    let dashboard = Dashboard::start(state.path()).await;
    let cookie = dashboard.log_in().await;
    let mut feed = dashboard
        .feed(&Request::get("/events").cookie(&cookie))
        .await;
    let snapshot = feed
        .wait_for("the first snapshot", |name, data| {
            (name == "snapshot").then(|| data.clone())
        })
        .await;
    assert_eq!(snapshot["jobs"], json!([]), "{snapshot:#}");
    assert_eq!(snapshot["total"], 0, "{snapshot:#}");

    let tag = unique("dash-cancel");
    let id = streaming_job(&mut server, &tag).await;
    let events = |job: &Value| job["transcript"]["events"].as_u64().unwrap_or(0);
    let running = feed
        .wait_for("the job running and thinking", |name, data| {
            job_in(name, data, &id)
                .filter(|job| job["status"] == "running" && job["progress"] == "thinking")
                .cloned()
        })
        .await;
    assert_eq!(running["agent"], "codex", "{running:#}");
    assert_eq!(running["origin"], "background", "{running:#}");
    let later = feed
        .wait_for("more of its events", |name, data| {
            job_in(name, data, &id)
                .filter(|job| events(job) > events(&running))
                .cloned()
        })
        .await;
    assert_eq!(later["status"], "running", "{later:#}");

    let cancel = format!("/jobs/{id}/cancel");
    let csrf = dashboard.csrf_of_page(&cookie, &id).await;
    let refused = [
        Request::post(&cancel).cookie(&cookie),
        Request::post(&cancel)
            .cookie(&cookie)
            .header("x-csrf-token", &"0".repeat(64)),
        Request::post(&cancel)
            .cookie(&cookie)
            .header("x-csrf-token", &csrf)
            .header("Origin", "http://evil.example"),
    ];
    for request in refused {
        let response = dashboard.send(&request).await;
        assert_eq!(response.status, 403, "{request:?}: {response:?}");
    }
    let no_session = dashboard
        .send(&Request::post(&cancel).header("x-csrf-token", &csrf))
        .await;
    assert_eq!(no_session.status, 401, "{no_session:?}");

    let origin = format!("http://{}", dashboard.host);
    let cancelled = dashboard
        .send(
            &Request::post(&cancel)
                .cookie(&cookie)
                .header("x-csrf-token", &csrf)
                .header("Origin", &origin),
        )
        .await;
    assert_eq!(cancelled.status, 200, "{cancelled:?}");
    let report = cancelled.json();
    assert_eq!(report["result"], "cancelled", "{report:#}");
    assert_eq!(report["status"], "cancelled", "{report:#}");
    feed.wait_for("the job cancelled in the feed", |name, data| {
        job_in(name, data, &id)
            .filter(|job| job["status"] == "cancelled")
            .map(|_| ())
    })
    .await;
    assert_none_tagged(&tag);

    let again = dashboard
        .send(
            &Request::post(&cancel)
                .cookie(&cookie)
                .header("x-csrf-token", &csrf),
        )
        .await;
    assert_eq!(again.json()["result"], "already_finished", "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jobs_page_renders_its_answer_as_markdown_with_the_html_in_it_escaped() {
    let answer = "**bold**_and_`code`_<script>alert(1)</script>_<img_src=x_onerror=alert(2)>_[link](javascript:alert(3))";
    // Every field bound: one left out of the pattern would be dropped (the dashboard killed).
    let JobPage {
        dashboard,
        cookie,
        id,
        mut feed,
        _server,
        _state,
    } = JobPage::open("claude", &format!("tool answer={answer}")).await;
    let html = feed
        .wait_for("the rendered answer", |name, data| {
            (name == "answer").then(|| data["html"].as_str().unwrap().to_owned())
        })
        .await;
    assert!(html.contains("<strong>bold</strong>"), "{html}");
    assert!(html.contains("<code>code</code>"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(
        !html.contains("<script") && !html.contains("<img"),
        "{html}"
    );
    assert!(html.contains(r##"<a href="#">link</a>"##), "{html}");
    let (job, events) = ended(&mut feed, &id).await;
    assert_eq!(job["status"], "completed", "{job:#}");
    let types: Vec<String> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap().to_owned())
        .collect();
    for kind in [
        "session_started",
        "tool_started",
        "tool_finished",
        "turn_completed",
    ] {
        assert!(
            types.iter().any(|found| found == kind),
            "{kind} not in {types:?}"
        );
    }

    let unknown = dashboard
        .send(&Request::get("/jobs/job_zzzzzzzzzzzzzzzz").cookie(&cookie))
        .await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_jobs_page_shows_its_error_and_hint() {
    let JobPage {
        id,
        mut feed,
        dashboard: _dashboard,
        cookie: _,
        _server,
        _state,
    } = JobPage::open("gemini", "fail=429_Too_Many_Requests:_quota_exhausted").await;
    let job = feed
        .wait_for("the job failed", |name, data| {
            job_in(name, data, &id)
                .filter(|job| job["status"] == "failed")
                .cloned()
        })
        .await;
    let error = &job["error"];
    assert_eq!(error["kind"], "rate_limited", "{job:#}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|message| message.contains("quota exhausted")),
        "{job:#}"
    );
    assert!(
        error["hint"].as_str().is_some_and(|hint| !hint.is_empty()),
        "{job:#}"
    );
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_dashboard_with_exit_0_while_a_feed_is_open() {
    let state = temp_dir("dash-term");
    let mut dashboard = Dashboard::start(state.path()).await;
    let cookie = dashboard.log_in().await;
    let mut feed = dashboard
        .feed(&Request::get("/events").cookie(&cookie))
        .await;
    feed.wait_for("the snapshot", |name, _| (name == "snapshot").then_some(()))
        .await;
    dashboard.signal(nix::sys::signal::Signal::SIGTERM);
    let status = dashboard.wait_exit().await;
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_port_in_use_or_an_unusable_store_ends_the_dashboard_at_start_saying_what_to_do() {
    let dashboard = |state: &Path, args: &[&str]| {
        common::cam_command()
            .arg("dashboard")
            .args(args)
            .env("CAM_STATE_DIR", state)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run the dashboard")
    };
    let state = temp_dir("dash-start");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let busy = dashboard(state.path(), &["--port", &port]);
    let stderr = String::from_utf8_lossy(&busy.stderr);
    assert_eq!(busy.status.code(), Some(1), "{busy:?}");
    assert!(busy.stdout.is_empty(), "no URL printed: {busy:?}");
    assert!(
        stderr.contains(&format!("127.0.0.1:{port}")) && stderr.contains("--port"),
        "{stderr}"
    );

    let not_a_dir = state.path().join("a-file");
    std::fs::write(&not_a_dir, "").unwrap();
    let unusable = dashboard(&not_a_dir, &[]);
    let stderr = String::from_utf8_lossy(&unusable.stderr);
    assert_eq!(unusable.status.code(), Some(1), "{unusable:?}");
    assert!(stderr.contains("CAM_STATE_DIR"), "{stderr}");
}

/// A POST of the page's buttons: the session, its CSRF value and our Origin.
fn button(dashboard: &Dashboard, cookie: &str, csrf: &str, path: &str) -> Request {
    Request::post(path)
        .cookie(cookie)
        .header("x-csrf-token", csrf)
        .header("Origin", &format!("http://{}", dashboard.host))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_jobs_page_shows_its_diff_escaped_and_applies_or_discards_it_behind_the_guard()
{
    let state = temp_dir("dash-review");
    let repo = GitRepo::new();
    let mut server = server_on(state.path()).await;
    let evil = "line one\n<script>alert(1)</script> & more\n";
    let first = repo.isolated_edit(&mut server, evil).await;
    let second = repo
        .isolated_edit(&mut server, "line one, rewritten\n")
        .await;
    let dashboard = Dashboard::start(state.path()).await;
    let cookie = dashboard.log_in().await;

    let review = dashboard
        .send(&Request::get(&format!("/jobs/{first}/review")).cookie(&cookie))
        .await;
    assert_eq!(review.status, 200, "{review:?}");
    let view = review.json();
    assert_eq!(view["isolation"], "worktree", "{view:#}");
    assert_eq!(view["state"], "kept", "{view:#}");
    assert_eq!(view["branch"], format!("cli-agent-mcp/{first}"), "{view:#}");
    assert_eq!(view["actions"], json!(["apply", "discard"]), "{view:#}");
    let worktree = std::path::PathBuf::from(view["worktree"].as_str().unwrap());
    assert!(worktree.join("notes.txt").is_file(), "{view:#}");
    let html = view["html"].as_str().unwrap();
    assert!(html.contains("<code>notes.txt</code>"), "{html}");
    assert!(
        html.contains(
            r#"<span class="add">+&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</span>"#
        ),
        "{html}"
    );
    assert!(!html.contains("<script"), "{html}");

    let mut list = dashboard
        .feed(&Request::get("/events").cookie(&cookie))
        .await;
    let disk = list
        .wait_for("the worktrees' disk use", |name, data| {
            (name == "worktrees").then(|| data.clone())
        })
        .await;
    let ours = disk["jobs"].as_array().unwrap();
    assert_eq!(ours.len(), 2, "{disk:#}");
    assert!(
        ours.iter().all(|job| job["bytes"].as_u64() > Some(0)),
        "{disk:#}"
    );
    assert!(disk["bytes"].as_u64() > Some(0), "{disk:#}");

    let csrf = dashboard.csrf_of_page(&cookie, &first).await;
    let apply = format!("/jobs/{first}/apply");
    let discard = format!("/jobs/{first}/discard");
    for path in [&apply, &discard] {
        let refused = [
            Request::post(path).cookie(&cookie),
            Request::post(path)
                .cookie(&cookie)
                .header("x-csrf-token", &"0".repeat(64)),
            Request::post(path)
                .cookie(&cookie)
                .header("x-csrf-token", &csrf)
                .header("Origin", "http://evil.example"),
        ];
        for request in refused {
            let response = dashboard.send(&request).await;
            assert_eq!(response.status, 403, "{request:?}: {response:?}");
        }
        let no_session = Request::post(path).header("x-csrf-token", &csrf);
        assert_eq!(dashboard.send(&no_session).await.status, 401);
    }
    assert_eq!(
        repo.notes(),
        "line one\n",
        "nothing refused touched the workspace"
    );
    assert!(worktree.is_dir(), "nothing refused removed the worktree");

    let applied = dashboard
        .send(&button(&dashboard, &cookie, &csrf, &apply))
        .await;
    assert_eq!(applied.status, 200, "{applied:?}");
    assert_eq!(applied.json()["result"], "applied", "{applied:?}");
    assert_eq!(repo.notes(), evil);
    assert!(!worktree.exists(), "an applied job's worktree goes");
    let after = dashboard
        .send(&Request::get(&format!("/jobs/{first}/review")).cookie(&cookie))
        .await
        .json();
    assert_eq!(
        (&after["state"], &after["actions"]),
        (&json!("applied"), &json!([]))
    );
    let again = dashboard
        .send(&button(&dashboard, &cookie, &csrf, &apply))
        .await;
    assert_eq!(again.status, 409, "{again:?}");

    let conflict = dashboard
        .send(&button(
            &dashboard,
            &cookie,
            &csrf,
            &format!("/jobs/{second}/apply"),
        ))
        .await;
    assert_eq!(conflict.status, 409, "{conflict:?}");
    let refusal = conflict.json();
    assert_eq!(refusal["result"], "refused", "{refusal:#}");
    assert_eq!(refusal["conflicts"], json!(["notes.txt"]), "{refusal:#}");
    assert_eq!(
        repo.notes(),
        evil,
        "a refused apply leaves the workspace as it was"
    );

    let discarded = dashboard
        .send(&button(
            &dashboard,
            &cookie,
            &csrf,
            &format!("/jobs/{second}/discard"),
        ))
        .await;
    assert_eq!(discarded.status, 200, "{discarded:?}");
    assert_eq!(discarded.json()["result"], "discarded", "{discarded:?}");
    let branches = repo.git(&["branch", "--list", "cli-agent-mcp/*"]);
    assert!(!branches.contains(&second), "{branches}");
    assert!(
        branches.contains(&first),
        "an applied job's branch stays: {branches}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_place_jobs_page_offers_revert_which_takes_its_changes_out() {
    let state = temp_dir("dash-revert");
    let repo = GitRepo::new();
    let mut server = server_on(state.path()).await;
    let id = repo
        .in_place_edit(&mut server, "line one\nline two\n")
        .await;
    assert_eq!(repo.notes(), "line one\nline two\n");
    let dashboard = Dashboard::start(state.path()).await;
    let cookie = dashboard.log_in().await;
    let review = format!("/jobs/{id}/review");

    let view = dashboard
        .send(&Request::get(&review).cookie(&cookie))
        .await
        .json();
    assert_eq!(view["isolation"], "none", "{view:#}");
    assert_eq!(view["state"], "in_place", "{view:#}");
    assert_eq!(view["actions"], json!(["revert"]), "{view:#}");
    assert!(view["worktree"].is_null(), "{view:#}");
    let html = view["html"].as_str().unwrap();
    assert!(
        html.contains(r#"<span class="add">+line two</span>"#),
        "{html}"
    );

    let csrf = dashboard.csrf_of_page(&cookie, &id).await;
    let isolated_only = button(&dashboard, &cookie, &csrf, &format!("/jobs/{id}/apply"));
    let refused = dashboard.send(&isolated_only).await;
    assert_eq!(refused.status, 409, "{refused:?}");
    assert!(
        refused.json()["message"]
            .as_str()
            .unwrap()
            .contains("job_revert")
    );

    let revert = format!("/jobs/{id}/revert");
    let reverted = dashboard
        .send(&button(&dashboard, &cookie, &csrf, &revert))
        .await;
    assert_eq!(reverted.status, 200, "{reverted:?}");
    assert_eq!(reverted.json()["result"], "reverted", "{reverted:?}");
    assert_eq!(repo.notes(), "line one\n");
    let view = dashboard
        .send(&Request::get(&review).cookie(&cookie))
        .await
        .json();
    assert_eq!(
        (&view["state"], &view["actions"]),
        (&json!("reverted"), &json!([]))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_the_person_let_past_the_bounds_shows_what_and_the_question_in_its_events() {
    let (state, workspace) = (temp_dir("dash-asked"), temp_dir("dash-asked-ws"));
    let mut server = mcp::Server::builder()
        .env("CAM_STATE_DIR", state.path())
        .env("CAM_SANDBOX", "off")
        .env("CAM_ALLOWED_ROOTS", workspace.path())
        .env("CAM_MAX_PERMISSION", "workspace-write")
        .spawn();
    let capabilities = json!({"elicitation": {"form": {}}});
    server
        .initialize_declaring(mcp::LEGACY_VERSION, capabilities)
        .await;
    let arguments = json!({"prompt": "answer=done", "workspace": workspace.path(),
        "permission": "unlimited", "background": true});
    let call = server.start_call("codex", arguments, None).await;
    let question = server.server_request("elicitation/create", &[]).await;
    let allow = json!({"action": "accept", "content": {"allow": true}});
    server.respond(&question["id"], allow).await;
    let started = server.result(call).await;
    let id = started["structuredContent"]["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no job id in {started:#}"))
        .to_owned();

    let dashboard = Dashboard::start(state.path()).await;
    let cookie = dashboard.log_in().await;
    let mut feed = dashboard
        .feed(&Request::get(&format!("/jobs/{id}/events")).cookie(&cookie))
        .await;
    let (job, events) = ended(&mut feed, &id).await;
    let allowed = job["allowed_past"].as_str().unwrap_or_default();
    assert!(allowed.contains("permission unlimited"), "{job:#}");
    let first = &events[0];
    assert_eq!(first["type"], "question", "the first event: {events:#?}");
    assert_eq!(first["about"], "server_bounds", "{first:#}");
    assert_eq!(first["bounds"], allowed, "{first:#}");
    assert_eq!(first["answer"], "allowed", "{first:#}");
    assert_eq!(first["answered_by"], "cli-agent-mcp-tests", "{first:#}");

    let page = dashboard
        .send(&Request::get(&format!("/jobs/{id}")).cookie(&cookie))
        .await;
    assert!(page.body.contains(r#"id="allowed-past""#), "{}", page.body);
    let script = dashboard.send(&Request::get("/assets/job.js")).await;
    for shown in ["case 'question'", "job.allowed_past", "answered_by"] {
        assert!(script.body.contains(shown), "the page shows {shown}");
    }
}
