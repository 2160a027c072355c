//! `serve --http` end to end: the real binary on a loopback port, the fake CLIs, and an HTTP
//! client. The token (401 with a Bearer challenge), Host and Origin checks (403), the limits
//! (413, 503), a call with progress in both protocol eras, a cancel by closing the stream
//! (nothing left), the refusal to bind a public address without a token, SIGTERM (the call's
//! answer flushed, its job recorded interrupted, exit 0), and every session told of a CLI
//! installed while the server runs.

use crate::common;
use crate::mcp;
use crate::web;

use std::time::Duration;

use common::{assert_none_tagged, tagged_pids, temp_dir, unique, wait_for_tagged, wait_until};
use mcp::{Builder, LEGACY_VERSION, MODERN_VERSION, Server};
#[cfg(unix)]
use nix::sys::signal::Signal;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A server on `--http 127.0.0.1:0` and the URL it says it serves.
struct Http {
    server: Server,
    url: String,
    client: reqwest::Client,
    token: Option<&'static str>,
}

impl Http {
    async fn start(builder: Builder) -> Self {
        let (server, url) = builder.spawn_http().await;
        Self {
            server,
            url,
            client: web::client(),
            token: None,
        }
    }

    /// A JSON-RPC POST to `/mcp` with the headers a Streamable HTTP client sends.
    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(token) = self.token {
            request = request.bearer_auth(token);
        }
        request
    }

    /// A 2026-07-28 request: no session, version and capabilities in `_meta` and headers.
    fn modern(&self, id: i64, method: &str, mut params: Value) -> reqwest::RequestBuilder {
        params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(MODERN_VERSION);
        params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
        let mut request = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .header("mcp-protocol-version", MODERN_VERSION)
            .header("mcp-method", method);
        if let Some(name) = params["name"].as_str() {
            request = request.header("mcp-name", name);
        }
        request
    }

    /// A 2025-11-25 session: `initialize`, then `notifications/initialized`; its id.
    async fn legacy_session(&self) -> String {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY_VERSION, "capabilities": {},
            "clientInfo": {"name": "http-test", "version": "0"}}});
        let mut response = self.post(&initialize).send().await.expect("initialize");
        assert_eq!(response.status(), StatusCode::OK);
        let session = response.headers()["mcp-session-id"]
            .to_str()
            .expect("a session id")
            .to_owned();
        let answer = Sse::default().next(&mut response).await.expect("an answer");
        assert_eq!(answer["result"]["protocolVersion"], LEGACY_VERSION);
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self
            .post(&initialized)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", LEGACY_VERSION)
            .send()
            .await
            .expect("initialized");
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        session
    }
}

/// The server with the fake CLIs, as the MCP tests start it.
fn http_server() -> Builder {
    Server::builder()
}

/// Reads the JSON-RPC messages of an SSE response as they arrive.
#[derive(Default)]
struct Sse {
    events: web::Events,
}

impl Sse {
    /// The next message, or `None` once the stream ends.
    async fn next(&mut self, response: &mut reqwest::Response) -> Option<Value> {
        let event = tokio::time::timeout(mcp::DEADLINE, self.events.next(response))
            .await
            .expect("the stream stalled")?;
        Some(serde_json::from_str(&event.data).expect("JSON in an SSE event"))
    }

    /// Every message until the response to `id`, which is last.
    async fn until_response(&mut self, response: &mut reqwest::Response, id: i64) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Some(message) = self.next(response).await {
            let done = message["id"] == id;
            messages.push(message);
            if done {
                return messages;
            }
        }
        panic!("the stream ended without the response to {id}: {messages:#?}");
    }
}

fn call_params(prompt: &str, token: &str) -> Value {
    json!({"name": "codex", "arguments": {"prompt": prompt}, "_meta": {"progressToken": token}})
}

fn progress_of(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|message| message["method"] == "notifications/progress")
        .collect()
}

/// Send `request`, expect it refused with `status` and a body that names `fix`; its headers.
async fn refused(
    request: reqwest::RequestBuilder,
    status: StatusCode,
    fix: &str,
) -> reqwest::header::HeaderMap {
    let response = request.send().await.expect("send");
    assert_eq!(response.status(), status);
    let headers = response.headers().clone();
    let body = response.text().await.expect("body");
    assert!(body.contains(fix), "{body}");
    headers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_token_or_with_a_wrong_one_are_401_with_a_bearer_challenge() {
    let mut http = Http::start(http_server().env("CAM_HTTP_TOKEN", "right-token")).await;
    let discover = || http.modern(1, "server/discover", json!({}));

    let missing = refused(discover(), StatusCode::UNAUTHORIZED, "CAM_HTTP_TOKEN").await;
    let challenge = missing["www-authenticate"].to_str().expect("ascii");
    assert!(challenge.starts_with("Bearer "), "{challenge}");

    let wrong = discover().bearer_auth("wrong-token");
    let wrong = refused(wrong, StatusCode::UNAUTHORIZED, "wrong").await;
    let challenge = wrong["www-authenticate"].to_str().expect("ascii");
    assert!(challenge.contains("invalid_token"), "{challenge}");

    http.token = Some("right-token");
    let right = http
        .modern(2, "server/discover", json!({}))
        .send()
        .await
        .expect("send");
    assert_eq!(right.status(), StatusCode::OK, "{}", http.server.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_or_host_is_403_and_the_servers_own_origin_is_served() {
    let http = Http::start(http_server()).await;
    let discover = || http.modern(1, "server/discover", json!({}));

    let foreign_origin = discover().header("origin", "http://evil.example.com");
    refused(
        foreign_origin,
        StatusCode::FORBIDDEN,
        "--http-allowed-origin",
    )
    .await;
    let foreign_host = discover().header("host", "evil.example.com");
    refused(foreign_host, StatusCode::FORBIDDEN, "--http-allowed-host").await;

    let own_origin = http.url.trim_end_matches("/mcp").to_owned();
    let same_origin = discover()
        .header("origin", own_origin)
        .send()
        .await
        .expect("send");
    assert_eq!(same_origin.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversize_body_is_413_and_names_the_setting_that_raises_the_limit() {
    let http = Http::start(http_server().arg("--http-max-body-bytes").arg("2048")).await;
    let prompt = "x".repeat(4096);
    let oversize = http.modern(1, "tools/call", call_params(&prompt, "big"));
    refused(
        oversize,
        StatusCode::PAYLOAD_TOO_LARGE,
        "--http-max-body-bytes",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_concurrency_limit_is_503_until_the_first_one_ends() {
    let http = Http::start(http_server().arg("--http-max-requests").arg("1")).await;
    let tag = unique("http-busy");
    let mut first = http
        .modern(
            1,
            "tools/call",
            call_params(&format!("stream=60 tag={tag} children=1"), "busy"),
        )
        .send()
        .await
        .expect("send");
    wait_for_tagged(&tag, 1).await;

    let second = http.modern(2, "server/discover", json!({}));
    let busy = refused(
        second,
        StatusCode::SERVICE_UNAVAILABLE,
        "--http-max-requests",
    )
    .await;
    assert_eq!(busy["retry-after"], "1");

    let mut sse = Sse::default();
    sse.next(&mut first).await.expect("a first event");
    drop(first);
    wait_until("the first request's slot is free", || {
        tagged_pids(&tag).is_empty()
    })
    .await;
    let started = std::time::Instant::now();
    loop {
        let status = http
            .modern(3, "server/discover", json!({}))
            .send()
            .await
            .expect("send")
            .status();
        if status == StatusCode::OK {
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            started.elapsed() < mcp::DEADLINE,
            "the slot was never freed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_streams_its_progress_then_its_answer_in_both_protocol_eras() {
    let http = Http::start(http_server()).await;

    let mut modern = http
        .modern(
            1,
            "tools/call",
            call_params("stream=1 answer=modern_done", "modern"),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(modern.status(), StatusCode::OK);
    let messages = Sse::default().until_response(&mut modern, 1).await;
    assert!(
        !progress_of(&messages).is_empty(),
        "no progress: {messages:#?}"
    );
    let answer = &messages.last().expect("the answer")["result"];
    assert!(mcp::all_text(answer).contains("modern done"), "{answer:#}");

    let session = http.legacy_session().await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": call_params("stream=1 answer=legacy_done", "legacy")});
    let mut legacy = http
        .post(&call)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", LEGACY_VERSION)
        .send()
        .await
        .expect("send");
    assert_eq!(legacy.status(), StatusCode::OK);
    let messages = Sse::default().until_response(&mut legacy, 2).await;
    assert!(
        !progress_of(&messages).is_empty(),
        "no progress: {messages:#?}"
    );
    let answer = &messages.last().expect("the answer")["result"];
    assert!(mcp::all_text(answer).contains("legacy done"), "{answer:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_stream_of_a_call_cancels_its_run_and_leaves_no_process() {
    let http = Http::start(http_server()).await;
    let tag = unique("http-disconnect");
    let prompt = format!("stream=60 tag={tag} children=2");
    let mut response = http
        .modern(1, "tools/call", call_params(&prompt, "cut"))
        .send()
        .await
        .expect("send");
    wait_for_tagged(&tag, 2).await;
    let mut sse = Sse::default();
    let first = sse.next(&mut response).await.expect("a first event");
    assert_eq!(first["method"], "notifications/progress", "{first:#}");

    drop(response);
    wait_until("the run's processes are gone", || {
        tagged_pids(&tag).is_empty()
    })
    .await;
    assert_none_tagged(&tag);
    let stderr = http.server.stderr();
    assert!(stderr.contains("the client cancelled the call"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_address_without_a_token_is_refused_at_start() {
    let mut server = http_server().arg("--http").arg("0.0.0.0:0").spawn();
    let status = server.wait_exit(mcp::DEADLINE).await;
    assert_eq!(status.code(), Some(2));
    let stderr = server.stderr();
    assert!(
        stderr.contains("not a loopback address") && stderr.contains("CAM_HTTP_TOKEN"),
        "{stderr}"
    );

    let mut with_token = http_server()
        .env("CAM_HTTP_TOKEN", "t0ken")
        .arg("--http")
        .arg("0.0.0.0:0")
        .spawn();
    wait_until("the server with a token listens", || {
        with_token.stderr().contains("url=http://")
    })
    .await;
    assert!(with_token.is_running());
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_the_running_call_records_its_job_interrupted_and_exits_0() {
    let state = temp_dir("http-sigterm-state");
    let mut http = Http::start(http_server().env("CAM_STATE_DIR", state.path())).await;
    let tag = unique("http-sigterm");
    let mut response = http
        .modern(
            1,
            "tools/call",
            call_params(&format!("stream=60 tag={tag} children=1"), "term"),
        )
        .send()
        .await
        .expect("send");
    wait_for_tagged(&tag, 1).await;

    http.server.signal(Signal::SIGTERM);
    let messages = Sse::default().until_response(&mut response, 1).await;
    let answer = &messages.last().expect("the answer")["result"];
    assert!(mcp::all_text(answer).contains("SIGTERM"), "{answer:#}");
    let status = http.server.wait_exit(Duration::from_secs(30)).await;
    assert_eq!(status.code(), Some(0), "{}", http.server.stderr());
    assert_none_tagged(&tag);

    let listed = common::cam_command()
        .args(["jobs", "--json"])
        .env("CAM_STATE_DIR", state.path())
        .output()
        .expect("cli-agent-mcp jobs");
    let jobs: Value = serde_json::from_slice(&listed.stdout).expect("jobs as JSON");
    assert_eq!(jobs[0]["status"], "interrupted", "{jobs:#}");
}

/// 2025-11-25 says a dropped stream is not a cancel (the client may resume it); ending the
/// session is, and so is `notifications/cancelled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_2025_11_25_session_ending_the_session_or_a_cancel_stops_the_runs() {
    let http = Http::start(http_server()).await;
    let session = http.legacy_session().await;
    let in_session = |body: &Value| {
        http.post(body)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", LEGACY_VERSION)
    };
    let (cancelled, ended) = (unique("http-cancelled"), unique("http-session-ended"));
    let mut streams = Vec::new();
    for (id, tag) in [(2, &cancelled), (3, &ended)] {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": call_params(&format!("stream=60 tag={tag} children=2"), tag)});
        let mut response = in_session(&call).send().await.expect("send");
        wait_for_tagged(tag, 2).await;
        Sse::default().next(&mut response).await.expect("an event");
        streams.push(response);
    }

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "test"}});
    let accepted = in_session(&cancel).send().await.expect("send");
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    wait_until("the cancelled call's processes are gone", || {
        tagged_pids(&cancelled).is_empty()
    })
    .await;
    assert!(!tagged_pids(&ended).is_empty(), "the other call still runs");

    drop(streams);
    let deleted = http
        .client
        .delete(&http.url)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", LEGACY_VERSION)
        .send()
        .await
        .expect("send");
    assert!(deleted.status().is_success(), "{}", deleted.status());
    wait_until("the ended session's run is gone", || {
        tagged_pids(&ended).is_empty()
    })
    .await;
    assert_none_tagged(&ended);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_file_wins_over_the_environment() {
    let dir = temp_dir("http-token-file");
    let file = dir.path().join("token");
    std::fs::write(&file, "from-the-file\n").expect("write the token file");
    let builder = http_server()
        .env("CAM_HTTP_TOKEN", "from-the-env")
        .arg("--http-token-file")
        .arg(&file);
    let mut http = Http::start(builder).await;
    http.token = Some("from-the-env");
    let env_token = http.modern(1, "server/discover", json!({}));
    refused(env_token, StatusCode::UNAUTHORIZED, "wrong").await;
    http.token = Some("from-the-file");
    let served = http
        .modern(2, "server/discover", json!({}))
        .send()
        .await
        .expect("send");
    assert_eq!(served.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_handed_off_as_a_job_outlives_its_stream_until_job_cancel() {
    let http = Http::start(http_server()).await;
    let tag = unique("http-handoff");
    let mut params = call_params(&format!("stream=60 tag={tag} children=1"), "handoff");
    params["arguments"]["handoff_after_secs"] = json!(1);
    let mut response = http
        .modern(1, "tools/call", params)
        .send()
        .await
        .expect("send");
    let messages = Sse::default().until_response(&mut response, 1).await;
    drop(response);
    let handed_off = &messages.last().expect("the answer")["result"]["structuredContent"];
    assert_eq!(handed_off["status"], "running", "{handed_off:#}");
    let job = handed_off["job_id"].as_str().expect("a job id").to_owned();
    // The fake's child may start after the hand-off on a loaded machine; it must start.
    wait_for_tagged(&tag, 1).await;

    let cancel = json!({"name": "job_cancel", "arguments": {"job_id": job}});
    let mut cancelled = http
        .modern(2, "tools/call", cancel)
        .send()
        .await
        .expect("send");
    Sse::default().until_response(&mut cancelled, 2).await;
    wait_until("the job's processes are gone", || {
        tagged_pids(&tag).is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_at_the_root_logs_in_with_its_printed_url_not_the_bearer_token() {
    let http = Http::start(http_server().env("CAM_HTTP_TOKEN", "right-token")).await;
    let mut login = String::new();
    wait_until("the server prints the dashboard's URL", || {
        let stderr = http.server.stderr();
        login = stderr
            .split("dashboard: ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_default()
            .to_owned();
        !login.is_empty()
    })
    .await;
    let root = login.split_once("/?").expect("a login URL").0.to_owned() + "/";
    let client = web::client();

    let bearer_only = client.get(&root).bearer_auth("right-token").send().await;
    assert_eq!(
        bearer_only.expect("send").status(),
        StatusCode::UNAUTHORIZED,
        "the bearer token is no dashboard login"
    );
    let logged_in = client.get(&login).send().await.expect("send");
    assert_eq!(logged_in.status(), StatusCode::SEE_OTHER);
    let cookie = logged_in.headers()["set-cookie"]
        .to_str()
        .expect("ascii")
        .split(';')
        .next()
        .expect("a cookie")
        .to_owned();
    let page = client
        .get(&root)
        .header("cookie", &cookie)
        .send()
        .await
        .expect("send");
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.expect("body").contains("<html"));

    let mcp_with_cookie = http
        .modern(1, "server/discover", json!({}))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("send");
    assert_eq!(
        mcp_with_cookie.status(),
        StatusCode::UNAUTHORIZED,
        "/mcp still needs the bearer token"
    );
}

/// One server, many sessions: a CLI put on the server's PATH while two 2025-11-25 sessions are
/// open is announced on each one's stream.
// A symbolic link to the fake CLI's script put on PATH; Windows' PATH search is the engine's
// locate tests' (under Wine).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_session_hears_of_a_cli_installed_while_the_server_runs() {
    let bin = temp_dir("http-offered-bin");
    let name = unique("cam-http-qwen");
    let builder = http_server()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
        .env("CAM_NO_LOGIN_SHELL", "1")
        .env(&mcp::bin_env_var("qwen"), &name);
    let http = Http::start(builder).await;
    let mut streams = Vec::new();
    for _ in 0..2 {
        let session = http.legacy_session().await;
        let stream = http
            .client
            .get(&http.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", LEGACY_VERSION)
            .send()
            .await
            .expect("open the session's stream");
        assert_eq!(stream.status(), StatusCode::OK);
        streams.push(stream);
    }
    let fake = common::fake_cli("qwen");
    std::os::unix::fs::symlink(fake, bin.path().join(&name)).expect("install the fake");
    for (session, mut stream) in streams.into_iter().enumerate() {
        let mut sse = Sse::default();
        let mut before = Vec::new();
        loop {
            let message = sse.next(&mut stream).await;
            let Some(message) = message else {
                panic!("session {session}'s stream ended unannounced after {before:#?}");
            };
            if message["method"] == "notifications/tools/list_changed" {
                break;
            }
            before.push(message);
        }
    }
}
