//! `job_result`'s first page of an answer carries what `job_wait` reports of the job (status,
//! error and hint, session id, usage, duration) in text and `structuredContent`, also for a
//! job its server recorded before a SIGTERM, read from the next server; later pages stay lean.
//! Over stdio, against the fake CLIs.

use crate::mcp;

use mcp::{Server, all_text, is_error, job_id, structured, texts};
use serde_json::{Value, json};

// What the SIGTERM test uses (Unix only).
#[cfg(unix)]
use crate::common;
#[cfg(unix)]
use common::{temp_dir, unique, wait_for_tagged, wait_until};
#[cfg(unix)]
use nix::sys::signal::Signal;
#[cfg(unix)]
use std::time::Duration;

async fn first_page(server: &mut Server, id: &str) -> Value {
    let page = server.call("job_result", json!({"job_id": id})).await;
    assert!(!is_error(&page), "a page is a successful read: {page:#}");
    page
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_jobs_first_page_has_its_session_usage_and_duration_and_the_next_is_lean() {
    let mut server = Server::start().await;
    let done = server
        .call("codex", json!({"prompt": "answer=all_done_here"}))
        .await;
    let id = job_id(&done);
    let page = first_page(&mut server, &id).await;
    assert_eq!(texts(&page)[0], "all done here", "the page comes first");
    let report = structured(&page);
    assert_eq!(report["status"], "completed", "{page:#}");
    assert_eq!(report["session_id"], structured(&done)["session_id"]);
    assert!(report["usage"]["input_tokens"].is_u64(), "{page:#}");
    assert!(report["duration_ms"].is_u64(), "{page:#}");
    assert_eq!(report["text"], "all done here");
    assert!(report.get("answer").is_none(), "the page is the answer");
    assert!(all_text(&page).contains("session_id `"), "{page:#}");

    let later = server
        .call("job_result", json!({"job_id": &id, "offset": 4}))
        .await;
    assert_eq!(texts(&later)[0], "done here");
    assert_eq!(structured(&later)["status"], "completed");
    assert!(structured(&later).get("session_id").is_none(), "{later:#}");
}

/// A first page that reports a job which ended `status` with an error saying `error`: its
/// hint, the session to resume, and how long it ran.
fn assert_ended_page(page: &Value, status: &str, error: &str) {
    let report = structured(page);
    assert_eq!(report["status"], status, "{page:#}");
    assert!(
        report["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(error)),
        "{page:#}"
    );
    assert!(report["error"]["hint"].is_string(), "{page:#}");
    assert!(report["session_id"].is_string(), "resumable: {page:#}");
    assert!(report["duration_ms"].is_u64(), "{page:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_jobs_first_page_has_its_error_with_hint_and_session() {
    let mut server = Server::start().await;
    let failed = server
        .call(
            "codex",
            json!({"prompt": "fail=quota_exceeded_for_this_account"}),
        )
        .await;
    assert!(is_error(&failed), "{failed:#}");
    let id = job_id(&failed);
    let page = first_page(&mut server, &id).await;
    assert_ended_page(&page, "failed", "quota exceeded");
    let text = all_text(&page);
    assert!(
        text.contains("quota exceeded") && text.contains("hint: "),
        "{text}"
    );
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_interrupted_by_sigterm_reads_from_the_next_server_with_error_hint_and_session() {
    let state = temp_dir("job-result-sigterm");
    let tag = unique("job-result-sigterm");
    let mut server = Server::builder().env("CAM_STATE_DIR", state.path()).spawn();
    server.initialize().await;
    let started = server
        .call(
            "gemini",
            json!({"prompt": format!("stream=60 tag={tag} children=1"), "background": true}),
        )
        .await;
    let id = job_id(&started);
    wait_for_tagged(&tag, 1).await;
    wait_until("the job has streamed some of its answer", || {
        common::recorded_events(state.path(), &id) >= 5
    })
    .await;
    server.signal(Signal::SIGTERM);
    assert_eq!(
        server.wait_exit(Duration::from_secs(30)).await.code(),
        Some(0)
    );

    let mut next = Server::builder().env("CAM_STATE_DIR", state.path()).spawn();
    next.initialize().await;
    let page = first_page(&mut next, &id).await;
    assert_ended_page(&page, "interrupted", "SIGTERM");
    assert!(
        texts(&page)[0].contains("tick"),
        "the partial answer: {page:#}"
    );
    assert!(all_text(&page).contains("hint: "), "{page:#}");
}
