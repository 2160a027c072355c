use cli_agent_engine::AgentEvent;
use cli_agent_engine::clis::{CLAUDE, CODEX};
use cli_agent_test_support::common::temp_dir;
use rusqlite::Connection;

use super::super::schema::{V1, VERSION};
use super::super::tests::{insert, outcome};
use super::super::{JobStatus, dir};
use super::*;

fn ids(page: &FeedPage) -> Vec<String> {
    page.jobs.iter().map(|job| job.id.to_string()).collect()
}

#[test]
fn the_feed_reports_each_insert_progress_and_finish_once_after_the_cursor() {
    let dir = temp_dir("feed");
    let store = Store::open(dir.path()).unwrap();
    let older = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let start = store.feed_start(10).unwrap();
    assert_eq!(ids(&start), [older.to_string()]);
    assert_eq!(start.total, Some(1));
    assert!(
        store
            .changed_since(start.cursor, 10)
            .unwrap()
            .jobs
            .is_empty()
    );

    let newer = insert(&store, CLAUDE, dir.path(), JobStatus::Queued);
    let inserted = store.changed_since(start.cursor, 10).unwrap();
    assert_eq!(ids(&inserted), [newer.to_string()]);

    let recorder = store.recorder(&older);
    recorder.events(&[AgentEvent::Reasoning { text: "hm".into() }]);
    recorder.progress("thinking");
    recorder.flush();
    store.mark_running(&newer).unwrap();
    let moved = store.changed_since(inserted.cursor, 10).unwrap();
    assert_eq!(ids(&moved), [older.to_string(), newer.to_string()]);
    assert_eq!(moved.jobs[0].progress.as_deref(), Some("thinking"));
    assert_eq!(moved.jobs[1].status, JobStatus::Running);

    store
        .finish(&older, JobStatus::Completed, &outcome("done"))
        .unwrap();
    let finished = store.changed_since(moved.cursor, 1).unwrap();
    assert_eq!(ids(&finished), [older.to_string()]);
    assert_eq!(finished.jobs[0].status, JobStatus::Completed);
    assert!(
        store
            .changed_since(finished.cursor, 10)
            .unwrap()
            .jobs
            .is_empty()
    );
}

#[test]
fn a_version_1_store_migrates_and_its_jobs_are_in_the_feed() {
    let dir = temp_dir("feed-migrate");
    let old = Connection::open(dir.path().join(dir::DB_FILE)).unwrap();
    old.execute_batch(V1).unwrap();
    old.pragma_update(None, "user_version", 1).unwrap();
    old.execute(
        "INSERT INTO jobs (id, agent, origin, status, workspace, permission, prompt_preview,
            created_ms, owner_pid, owner_start)
         VALUES ('job_aaaaaaaaaaaaaaaa', 'codex', 'call', 'running', '/w', 'read-only', 'p',
            1, 0, 0)",
        [],
    )
    .unwrap();
    drop(old);

    let store = Store::open(dir.path()).unwrap();
    let version: i64 = store
        .conn()
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, VERSION);
    let start = store.feed_start(10).unwrap();
    assert_eq!(ids(&start), ["job_aaaaaaaaaaaaaaaa"]);
    let old_job = start.jobs[0].id.clone();
    store.request_cancel(&old_job).unwrap();
    let changed = store.changed_since(start.cursor, 10).unwrap();
    assert_eq!(ids(&changed), ["job_aaaaaaaaaaaaaaaa"]);
    assert_eq!(changed.jobs[0].status, JobStatus::Interrupted);
}
