use std::time::Duration;

use cli_agent_engine::clis::CODEX;
use cli_agent_engine::{AgentEvent, Outcome, Permission, Status};
use cli_agent_test_support::common::temp_dir;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::jobs::store::{JobStatus, NewJob, Origin};

/// A store in a fresh temp dir holding one completed job of `events` events and `answer`.
fn store_with_job(dir: &std::path::Path, events: usize, answer: &str) -> (Store, JobId) {
    let store = Store::open(dir).unwrap();
    let id = JobId::random();
    store
        .insert(&NewJob {
            id: &id,
            agent: CODEX,
            origin: Origin::Background,
            workspace: dir,
            permission: Permission::ReadOnly,
            model: None,
            session_id: None,
            prompt: "p",
            status: JobStatus::Running,
            allowed_past: None,
        })
        .unwrap();
    let recorder = store.recorder(&id);
    for n in 0..events {
        recorder.events(&[AgentEvent::Reasoning {
            text: format!("step {n}"),
        }]);
    }
    recorder.flush();
    let mut outcome = Outcome::not_run(
        CODEX.name(),
        Status::Completed,
        cli_agent_engine::ErrorInfo {
            kind: cli_agent_engine::ErrorKind::AgentError,
            message: String::new(),
            hint: None,
        },
    );
    outcome.error = None;
    outcome.answer = answer.to_owned();
    store.finish(&id, JobStatus::Completed, &outcome).unwrap();
    (store, id)
}

#[tokio::test]
async fn an_ended_jobs_answer_comes_at_once_and_its_long_transcript_a_page_at_a_time() {
    let dir = temp_dir("dash-feed");
    let (store, id) = store_with_job(dir.path(), 1200, "**done** <b>raw</b>");
    let state = DashboardState::new(
        store,
        "127.0.0.1:1".parse().unwrap(),
        &[],
        CancellationToken::new(),
    )
    .unwrap();
    let mut feed = JobFeed::new(state, id.clone());
    let mut messages = Vec::new();
    let all = async {
        while let Some(message) = feed.next().await {
            messages.push(message);
        }
    };
    tokio::time::timeout(Duration::from_secs(60), all)
        .await
        .expect("the feed of an ended job ends");

    let names: Vec<&str> = messages.iter().map(Message::name).collect();
    assert_eq!(names, ["job", "lines", "answer", "lines", "lines", "end"]);
    let Message::Job(job) = &messages[0] else {
        unreachable!()
    };
    assert_eq!((&job.job.id, job.job.status), (&id, JobStatus::Completed));
    let mut next = 0;
    for message in [&messages[1], &messages[3], &messages[4]] {
        let Message::Lines(lines) = message else {
            unreachable!()
        };
        assert_eq!(lines.offset, next);
        for line in lines.text.lines() {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(event["text"], format!("step {next}"));
            next += 1;
        }
    }
    assert_eq!(next, 1200);
    let Message::Answer(answer) = &messages[2] else {
        unreachable!()
    };
    assert_eq!(
        answer.html,
        "<p><strong>done</strong> &lt;b&gt;raw&lt;/b&gt;</p>\n"
    );
    assert_eq!((answer.chars, answer.shown_chars), (19, 19));
}
