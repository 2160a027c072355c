use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cli_agent_engine::clis::{CLAUDE, CODEX, GEMINI};
use cli_agent_engine::{
    Agent, AgentEvent, ErrorInfo, ErrorKind, Outcome, Permission, Status, ToolSummary, Usage,
};
use cli_agent_test_support::common::temp_dir;
use tempfile::TempDir;

use super::*;

const NO_CAP: u64 = u64::MAX / 4;

/// A store without a transcript cap in a fresh directory.
pub(super) fn open(name: &str) -> (TempDir, Store) {
    let dir = temp_dir(name);
    let store = Store::open_with(dir.path(), NO_CAP).unwrap();
    (dir, store)
}

pub(super) fn insert(store: &Store, agent: Agent, workspace: &Path, status: JobStatus) -> JobId {
    let id = JobId::random();
    store
        .insert(&NewJob {
            id: &id,
            agent,
            origin: Origin::Background,
            workspace,
            permission: Permission::WorkspaceWrite,
            model: Some("m1"),
            session_id: None,
            prompt: &"do the thing ".repeat(40),
            status,
            allowed_past: None,
        })
        .unwrap();
    id
}

pub(super) fn outcome(answer: &str) -> Outcome {
    Outcome {
        agent: "codex".to_owned(),
        status: Status::Failed,
        answer: answer.to_owned(),
        session_id: Some("sess-1".into()),
        reasoning: Some("thought".into()),
        tools: ToolSummary::default(),
        usage: Some(Usage {
            input_tokens: 10,
            cached_input_tokens: 2,
            output_tokens: 5,
            reasoning_tokens: None,
            cost_usd: Some(0.5),
        }),
        exit_code: Some(1),
        exit_signal: None,
        duration_ms: 1234,
        stderr_tail: "boom".into(),
        warnings: vec!["w".into()],
        error: Some(ErrorInfo {
            kind: ErrorKind::RateLimited,
            message: "429".into(),
            hint: Some("wait".into()),
        }),
        tree: None,
        check: None,
        output: Some(serde_json::json!({"verdict": "ok"})),
    }
}

fn text(text: &str) -> AgentEvent {
    AgentEvent::Text {
        text: text.to_owned(),
        delta: false,
    }
}

/// A second connection on the store's file, as another process would have.
fn raw(store: &Store) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    conn.busy_timeout(Duration::from_secs(30)).unwrap();
    conn
}

pub(super) fn set_owner(store: &Store, id: &JobId, owner: Owner) {
    raw(store)
        .execute(
            "UPDATE jobs SET owner_pid = ?2, owner_start = ?3 WHERE id = ?1",
            rusqlite::params![id.as_str(), owner.pid, owner.start_ticks],
        )
        .unwrap();
}

pub(super) fn status(store: &Store, id: &JobId) -> JobStatus {
    store.get(id).unwrap().unwrap().status
}

/// An owner that existed and is gone: a child, spawned, killed and reaped.
pub(super) fn dead_owner() -> Owner {
    let mut child = sleeper().spawn().unwrap();
    let owner = Owner::of(child.id()).unwrap();
    assert!(owner.is_alive());
    child.kill().unwrap();
    child.wait().unwrap();
    owner
}

#[test]
fn a_job_goes_from_queued_to_running_to_finished_with_its_whole_outcome() {
    let (dir, store) = open("store-round-trip");
    let id = insert(&store, CODEX, dir.path(), JobStatus::Queued);
    let queued = store.get(&id).unwrap().unwrap();
    assert_eq!(
        (queued.status, queued.started_ms, queued.owner),
        (JobStatus::Queued, None, Owner::this_process())
    );
    assert_eq!(queued.prompt_preview.chars().count(), 200);
    assert_eq!(store.outcome(&id).unwrap(), None);

    store.mark_running(&id).unwrap();
    assert!(store.get(&id).unwrap().unwrap().started_ms.is_some());
    let outcome = outcome("the answer ✓");
    store.finish(&id, JobStatus::Failed, &outcome).unwrap();

    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(record.status, JobStatus::Failed);
    assert_eq!(record.answer_chars, 12);
    assert_eq!(record.session_id.as_deref(), Some("sess-1"));
    assert_eq!(record.error, outcome.error);
    assert_eq!(record.usage, outcome.usage);
    assert!(record.finished_ms >= record.started_ms);
    assert_eq!(store.outcome(&id).unwrap(), Some(outcome));
}

#[test]
fn a_job_keeps_the_bounds_the_person_let_it_past_and_one_within_them_has_none() {
    let (dir, store) = open("store-allowed-past");
    let within = insert(&store, CODEX, dir.path(), JobStatus::Queued);
    assert_eq!(store.get(&within).unwrap().unwrap().allowed_past, None);
    let id = JobId::random();
    let allowed = "it asks for permission unlimited, above your ceiling workspace-write";
    store
        .insert(&NewJob {
            id: &id,
            agent: CODEX,
            origin: Origin::Call,
            workspace: dir.path(),
            permission: Permission::Unlimited,
            model: None,
            session_id: None,
            prompt: "p",
            status: JobStatus::Queued,
            allowed_past: Some(allowed),
        })
        .unwrap();
    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(record.allowed_past.as_deref(), Some(allowed));
}

#[test]
fn unknown_jobs_are_none_to_readers_and_an_error_to_writers() {
    let (_dir, store) = open("store-unknown");
    let id = JobId::random();
    assert_eq!(store.get(&id).unwrap(), None);
    assert_eq!(store.answer_page(&id, 0, 10).unwrap(), None);
    assert_eq!(store.transcript_page(&id, 0, 10).unwrap(), None);
    for error in [
        store.mark_running(&id).unwrap_err(),
        store
            .finish(&id, JobStatus::Completed, &outcome(""))
            .unwrap_err(),
        store.request_cancel(&id).unwrap_err(),
    ] {
        let message = error.to_string();
        assert!(matches!(error, StoreError::UnknownJob { .. }), "{message}");
        assert!(message.contains(id.as_str()) && message.contains("cli-agent-mcp jobs"));
    }
}

#[test]
fn answer_pages_rejoin_a_multi_mib_answer_byte_for_byte() {
    let (dir, store) = open("store-pages");
    let id = insert(&store, CLAUDE, dir.path(), JobStatus::Running);
    let answer: String = (0..1_000_000)
        .map(|i| match i % 5 {
            0 => "a".to_owned(),
            1 => "é".to_owned(),
            2 => "日本".to_owned(),
            3 => "🦀\n".to_owned(),
            _ => format!("{i}\0"),
        })
        .collect();
    assert!(answer.len() > 2 * 1024 * 1024);
    store
        .finish(&id, JobStatus::Completed, &outcome(&answer))
        .unwrap();

    let mut joined = String::new();
    let mut offset = Some(0);
    while let Some(at) = offset {
        let page = store.answer_page(&id, at, 99_999).unwrap().unwrap();
        assert_eq!(page.total, answer.chars().count() as u64);
        joined.push_str(&page.text);
        offset = page.next_offset;
    }
    assert_eq!(joined.as_bytes(), answer.as_bytes());
    let past = store.answer_page(&id, u64::MAX / 2, 10).unwrap().unwrap();
    assert_eq!((past.text.as_str(), past.next_offset), ("", None));
}

#[test]
fn recorded_events_page_back_in_order_with_the_session_and_progress() {
    let (dir, store) = open("store-events");
    let id = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let recorder = store.recorder(&id);
    recorder.events(&[AgentEvent::SessionStarted {
        session_id: "thread-9".into(),
        model: None,
    }]);
    for i in 1..250 {
        recorder.events(&[text(&format!("line {i}"))]);
        if i % 100 == 0 {
            recorder.flush();
        }
    }
    recorder.progress("running `ls`");
    recorder.flush();

    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(record.transcript.events, 250);
    assert_eq!(record.session_id.as_deref(), Some("thread-9"));
    assert_eq!(record.progress.as_deref(), Some("running `ls`"));
    let mut lines = Vec::new();
    let mut offset = Some(0);
    while let Some(at) = offset {
        let page = store.transcript_page(&id, at, 7).unwrap().unwrap();
        lines.extend(page.text.lines().map(str::to_owned));
        offset = page.next_offset;
    }
    assert_eq!(lines.len(), 250);
    assert!(lines[0].contains("thread-9"));
    for (i, line) in lines.iter().enumerate().skip(1) {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(event["text"], format!("line {i}"));
    }
}

#[test]
fn events_are_committed_within_a_tick_without_a_flush() {
    let (dir, store) = open("store-tick");
    let id = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let recorder = store.recorder(&id);
    recorder.events(&[text("hello")]);
    // Another connection sees it: it is committed, not just buffered.
    let other = Store::open_with(dir.path(), NO_CAP).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while other.get(&id).unwrap().unwrap().transcript.events == 0 {
        assert!(Instant::now() < deadline, "the event was never committed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn events_recorded_after_finish_are_kept() {
    let (dir, store) = open("store-late");
    let id = insert(&store, GEMINI, dir.path(), JobStatus::Running);
    let recorder = store.recorder(&id);
    recorder.events(&[text("before")]);
    store
        .finish(&id, JobStatus::Completed, &outcome("done"))
        .unwrap();
    recorder.events(&[text("after")]);
    recorder.flush();
    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(
        (record.status, record.transcript.events),
        (JobStatus::Completed, 2)
    );
    let page = store.transcript_page(&id, 0, 10).unwrap().unwrap();
    assert!(page.text.contains("before") && page.text.contains("after"));
}

#[test]
fn the_transcript_cap_keeps_the_head_and_the_newest_tail_and_reports_the_gap() {
    // 100 commits of 10 events, each line about 100 bytes: 100 KB against a 20 KB cap.
    transcript_within_the_cap(20_000, 1000, 10);
}

#[test]
fn a_burst_past_the_cap_before_a_commit_keeps_the_same_head_tail_and_gap() {
    // 4 MB in one commit against a 1 MiB cap: the recorder drops the middle unwritten.
    transcript_within_the_cap(1 << 20, 40_000, 40_000);
}

fn transcript_within_the_cap(cap: u64, events: u64, commit_every: u64) {
    let dir = temp_dir("store-cap");
    let store = Store::open_with(dir.path(), cap).unwrap();
    let id = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let recorder = store.recorder(&id);
    for n in 0..events {
        recorder.events(&[text(&format!("{n:0>70}"))]);
        if (n + 1) % commit_every == 0 {
            recorder.flush();
        }
    }
    let info = store.get(&id).unwrap().unwrap().transcript;
    assert!(info.bytes <= cap, "{info:?}");
    assert!(
        info.dropped_events > 0 && info.dropped_bytes > 0,
        "{info:?}"
    );
    assert_eq!(info.events + info.dropped_events, events);

    let page = store.transcript_page(&id, 0, events).unwrap().unwrap();
    let lines: Vec<serde_json::Value> = page
        .text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let gap = lines
        .iter()
        .position(|line| line["type"] == "dropped")
        .unwrap();
    assert_eq!(lines[gap]["events"], info.dropped_events);
    assert_eq!(lines[gap]["bytes"], info.dropped_bytes);
    let number = |line: &serde_json::Value| line["text"].as_str().unwrap().parse::<u64>().unwrap();
    // The head from the first event on, the gap, then the tail up to the very last event.
    assert!(gap > 0 && number(&lines[0]) == 0 && number(&lines[gap - 1]) == gap as u64 - 1);
    assert_eq!(number(&lines[gap + 1]), gap as u64 + info.dropped_events);
    assert_eq!(number(lines.last().unwrap()), events - 1);
    assert_eq!(lines.len() as u64, info.events + 1);
    // A page starting after the gap reads the tail only.
    let after = store
        .transcript_page(&id, gap as u64 + info.dropped_events, 5)
        .unwrap()
        .unwrap();
    assert!(!after.text.contains("dropped"));
}

#[test]
fn list_filters_by_status_agent_and_workspace_newest_first_in_pages() {
    let (dir, store) = open("store-list");
    let (here, there) = (dir.path().join("a"), dir.path().join("b"));
    let mut ids = Vec::new();
    for i in 0..12 {
        let agent = if i % 2 == 0 { CODEX } else { CLAUDE };
        let workspace = if i % 3 == 0 { &here } else { &there };
        ids.push(insert(&store, agent, workspace, JobStatus::Running));
    }
    store
        .finish(&ids[4], JobStatus::Completed, &outcome("x"))
        .unwrap();
    let listed = |filter: ListFilter| -> Vec<JobId> {
        store
            .list(&filter)
            .unwrap()
            .into_iter()
            .map(|job| job.id)
            .collect()
    };
    let newest_first: Vec<JobId> = ids.iter().rev().cloned().collect();
    assert_eq!(listed(ListFilter::default()), newest_first);
    let page = |offset| ListFilter {
        limit: 5,
        offset,
        ..ListFilter::default()
    };
    assert_eq!(listed(page(0)), newest_first[..5]);
    assert_eq!(listed(page(10)), newest_first[10..]);
    let codex = listed(ListFilter {
        agent: Some("codex".to_owned()),
        ..ListFilter::default()
    });
    assert_eq!(
        codex,
        newest_first
            .iter()
            .skip(1)
            .step_by(2)
            .cloned()
            .collect::<Vec<_>>()
    );
    let done = ListFilter {
        status: Some(JobStatus::Completed),
        ..ListFilter::default()
    };
    assert_eq!(listed(done), [ids[4].clone()]);
    let in_here = listed(ListFilter {
        workspace: Some(here),
        ..ListFilter::default()
    });
    assert_eq!(
        in_here,
        [&ids[9], &ids[6], &ids[3], &ids[0]].map(Clone::clone)
    );
}

#[test]
fn prune_removes_finished_jobs_older_than_the_age_with_their_events() {
    let (dir, store) = open("store-prune");
    let old = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let recent = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let running = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let recorder = store.recorder(&old);
    recorder.events(&[text("x")]);
    recorder.flush();
    drop(recorder);
    for id in [&old, &recent] {
        store
            .finish(id, JobStatus::Completed, &outcome("x"))
            .unwrap();
    }
    let day_ms = 24 * 3600 * 1000;
    let conn = raw(&store);
    conn.execute(
        "UPDATE jobs SET finished_ms = finished_ms - ?2, created_ms = created_ms - ?2 WHERE id IN (?1, ?3)",
        rusqlite::params![old.as_str(), 8 * day_ms, running.as_str()],
    )
    .unwrap();

    assert_eq!(store.prune(Duration::from_secs(7 * 24 * 3600)).unwrap(), 1);
    assert_eq!(store.get(&old).unwrap(), None);
    assert!(store.get(&recent).unwrap().is_some());
    assert!(
        store.get(&running).unwrap().is_some(),
        "unfinished jobs are never pruned"
    );
    let chunks: u64 = conn
        .query_row(
            "SELECT count(*) FROM chunks WHERE job_id = ?1",
            [old.as_str()],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(chunks, 0);
}

#[test]
fn jobs_of_a_dead_owner_are_interrupted_and_a_live_owners_are_not() {
    let (dir, store) = open("store-orphans");
    let mine = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let dead = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let queued_dead = insert(&store, CODEX, dir.path(), JobStatus::Queued);
    let reused = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let finished_dead = insert(&store, CODEX, dir.path(), JobStatus::Running);
    store
        .finish(&finished_dead, JobStatus::Completed, &outcome("x"))
        .unwrap();
    let gone = dead_owner();
    for id in [&dead, &queued_dead, &finished_dead] {
        set_owner(&store, id, gone);
    }
    // Our own pid with another start time: the pid came round again to another process.
    let me = Owner::this_process();
    set_owner(
        &store,
        &reused,
        Owner {
            start_ticks: me.start_ticks + 1,
            ..me
        },
    );

    let mut orphans = store.interrupt_orphans().unwrap();
    orphans.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    let mut expected = vec![dead.clone(), queued_dead.clone(), reused.clone()];
    expected.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    assert_eq!(orphans, expected);
    for id in &expected {
        let record = store.get(id).unwrap().unwrap();
        assert_eq!(record.status, JobStatus::Interrupted);
        assert!(record.finished_ms.is_some());
    }
    assert_eq!(status(&store, &mine), JobStatus::Running);
    assert_eq!(status(&store, &finished_dead), JobStatus::Completed);
    assert_eq!(store.interrupt_orphans().unwrap(), []);
}

#[test]
fn request_cancel_reaches_a_live_owner_reports_an_ended_job_and_a_gone_owner() {
    let (dir, store) = open("store-cancel");
    let me = Owner::this_process();
    let live = insert(&store, CODEX, dir.path(), JobStatus::Queued);
    let other = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let ended = insert(&store, CODEX, dir.path(), JobStatus::Running);
    let orphan = insert(&store, CODEX, dir.path(), JobStatus::Running);
    store
        .finish(&ended, JobStatus::TimedOut, &outcome(""))
        .unwrap();
    set_owner(&store, &orphan, dead_owner());

    assert_eq!(store.cancel_requests(&me).unwrap(), []);
    assert_eq!(
        store.request_cancel(&live).unwrap(),
        CancelRequest::Requested { owner: me }
    );
    assert_eq!(
        store.cancel_requests(&me).unwrap(),
        std::slice::from_ref(&live)
    );
    let stranger = Owner {
        pid: me.pid + 1,
        ..me
    };
    assert_eq!(store.cancel_requests(&stranger).unwrap(), []);
    assert_eq!(
        store.request_cancel(&ended).unwrap(),
        CancelRequest::AlreadyFinished(JobStatus::TimedOut)
    );
    assert_eq!(
        store.request_cancel(&orphan).unwrap(),
        CancelRequest::OwnerGone
    );
    assert_eq!(status(&store, &orphan), JobStatus::Interrupted);
    // Once the owner records the cancel, it is no longer asked for.
    store
        .finish(&live, JobStatus::Cancelled, &outcome(""))
        .unwrap();
    assert_eq!(store.cancel_requests(&me).unwrap(), []);
    assert_eq!(status(&store, &other), JobStatus::Running);
}

/// Opens a store over the damaged file `damaged` and checks that it was moved aside whole.
fn assert_moved_aside_and_fresh(dir: &Path, damaged: &[u8]) {
    let store = Store::open_with(dir, NO_CAP).unwrap();
    let id = insert(&store, CODEX, dir, JobStatus::Running);
    assert!(store.get(&id).unwrap().is_some());
    assert_eq!(store.list(&ListFilter::default()).unwrap().len(), 1);
    let aside: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().contains(".sqlite3.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(std::fs::read(&aside[0]).unwrap(), damaged);
}

#[test]
fn a_file_that_is_not_a_database_is_moved_aside_and_a_fresh_store_works() {
    let dir = temp_dir("store-not-db");
    let garbage = b"this is not a database, and it is long enough to have a header".repeat(100);
    std::fs::write(dir.path().join(dir::DB_FILE), &garbage).unwrap();
    assert_moved_aside_and_fresh(dir.path(), &garbage);
}

#[test]
fn a_database_failing_its_check_is_moved_aside_and_a_fresh_store_works() {
    let dir = temp_dir("store-damaged");
    let store = Store::open_with(dir.path(), NO_CAP).unwrap();
    for _ in 0..50 {
        let id = insert(&store, CODEX, dir.path(), JobStatus::Running);
        store
            .finish(&id, JobStatus::Completed, &outcome(&"x".repeat(5000)))
            .unwrap();
    }
    drop(store);
    let path = dir.path().join(dir::DB_FILE);
    let conn = rusqlite::Connection::open(&path).unwrap();
    // Fold the WAL into the file, so the file's pages are the ones read.
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let root: usize = conn
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = 'jobs'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    drop(conn);
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 4 * 16384, "{}", bytes.len());
    // Garbage over the jobs table's root page (pages count from 1), which the check at open
    // reads; the header still says "SQLite format 3".
    bytes[(root - 1) * 16384..root * 16384].fill(0x5a);
    std::fs::write(&path, &bytes).unwrap();
    assert_moved_aside_and_fresh(dir.path(), &bytes);
}

#[test]
fn a_store_from_a_newer_version_is_refused_not_rewritten() {
    let dir = temp_dir("store-newer");
    drop(Store::open_with(dir.path(), NO_CAP).unwrap());
    let conn = rusqlite::Connection::open(dir.path().join(dir::DB_FILE)).unwrap();
    conn.pragma_update(None, "user_version", schema::VERSION + 1)
        .unwrap();
    drop(conn);
    let error = Store::open_with(dir.path(), NO_CAP)
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("newer cli-agent-mcp") && error.contains("CAM_STATE_DIR"),
        "{error}"
    );
}

/// Makes `dir` unwritable even for root (who ignores mode bits): immutable while it lives.
/// Unix only: a Windows directory is made unwritable by its ACL, not by a mode.
#[cfg(unix)]
struct Unwritable<'a>(&'a Path);

#[cfg(unix)]
impl<'a> Unwritable<'a> {
    fn new(dir: &'a Path) -> Self {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o500)).unwrap();
        let guard = Self(dir);
        if std::fs::write(dir.join("probe"), "x").is_ok() {
            let _ = std::fs::remove_file(dir.join("probe"));
            let status = std::process::Command::new("chattr")
                .arg("+i")
                .arg(dir)
                .status();
            assert!(
                status.is_ok_and(|s| s.success()),
                "cannot make {dir:?} unwritable"
            );
        }
        assert!(std::fs::write(dir.join("probe"), "x").is_err());
        guard
    }
}

#[cfg(unix)]
impl Drop for Unwritable<'_> {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(self.0)
            .status();
        let _ = std::fs::set_permissions(self.0, std::fs::Permissions::from_mode(0o700));
    }
}

#[cfg(unix)]
#[test]
fn an_unwritable_directory_gives_an_error_that_says_how_to_fix_it() {
    let dir = temp_dir("store-readonly");
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let _unwritable = Unwritable::new(&state);
    let error = Store::open_with(&state, NO_CAP).err().unwrap();
    let message = error.to_string();
    assert!(matches!(error, StoreError::Unwritable { .. }), "{message}");
    assert!(
        message.contains("writable") && message.contains("CAM_STATE_DIR"),
        "{message}"
    );

    let below = state.join("sub");
    let message = Store::open_with(&below, NO_CAP).err().unwrap().to_string();
    assert!(
        message.contains("cannot create") && message.contains("CAM_STATE_DIR"),
        "{message}"
    );
}

#[test]
fn two_stores_on_one_file_write_and_read_at_once() {
    let dir = temp_dir("store-two");
    let stores = [
        Store::open_with(dir.path(), NO_CAP).unwrap(),
        Store::open_with(dir.path(), NO_CAP).unwrap(),
    ];
    let ids: Vec<Vec<JobId>> = std::thread::scope(|scope| {
        let workers: Vec<_> = stores
            .iter()
            .map(|store| {
                scope.spawn(|| {
                    (0..100)
                        .map(|i| {
                            let id = insert(store, CODEX, dir.path(), JobStatus::Running);
                            let recorder = store.recorder(&id);
                            recorder.events(&[text(&format!("event {i}"))]);
                            recorder.flush();
                            store
                                .finish(&id, JobStatus::Completed, &outcome(&format!("{i}")))
                                .unwrap();
                            assert!(!store.list(&ListFilter::default()).unwrap().is_empty());
                            id
                        })
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().unwrap())
            .collect()
    });
    for (store, other) in [(&stores[0], &ids[1]), (&stores[1], &ids[0])] {
        for (i, id) in other.iter().enumerate() {
            let record = store.get(id).unwrap().unwrap();
            assert_eq!(
                (record.status, record.transcript.events),
                (JobStatus::Completed, 1)
            );
            assert_eq!(store.outcome(id).unwrap().unwrap().answer, i.to_string());
        }
    }
}

#[test]
fn a_full_disk_fails_the_write_with_what_to_do_and_the_store_still_reads() {
    let (dir, store) = open("store-full");
    let id = insert(&store, CODEX, dir.path(), JobStatus::Running);
    // SQLite's own page limit stands in for the disk: past it, writes fail with SQLITE_FULL.
    let pages: u64 = store
        .conn()
        .query_row("PRAGMA page_count", [], |row| row.get(0))
        .unwrap();
    store
        .conn()
        .pragma_update(None, "max_page_count", pages)
        .unwrap();
    let error = store
        .finish(&id, JobStatus::Completed, &outcome(&"a".repeat(1 << 20)))
        .unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, StoreError::DiskFull { .. }), "{message}");
    assert!(
        message.contains("jobs prune") && message.contains("CAM_STATE_DIR"),
        "{message}"
    );
    assert_eq!(status(&store, &id), JobStatus::Running);
}

#[test]
fn store_and_recorder_can_be_shared_across_threads_and_tasks() {
    fn shared<T: Clone + Send + Sync + 'static>() {}
    fn sendable<T: Send + Sync + 'static>() {}
    shared::<Store>();
    sendable::<Recorder>();
}

#[test]
fn stores_opened_at_once_on_a_fresh_directory_all_open() {
    for round in 0..40 {
        let dir = temp_dir(&format!("store-race-{round}"));
        let path = dir.path().to_owned();
        let openers: Vec<_> = (0..6)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Store::open(&path).map(|_| ()))
            })
            .collect();
        for opener in openers {
            opener.join().expect("no panic").expect("opens");
        }
    }
}

/// A process that waits a minute: `sleep 60`.
#[cfg(unix)]
fn sleeper() -> std::process::Command {
    let mut sleep = std::process::Command::new("sleep");
    sleep.arg("60");
    sleep
}

/// A process that waits a minute: this test binary running [`sleeps_when_asked`] (Windows
/// has no `sleep`).
#[cfg(windows)]
fn sleeper() -> std::process::Command {
    let mut sleep = std::process::Command::new(std::env::current_exe().unwrap());
    sleep.env(SLEEPER, "1").args([
        "--exact",
        "jobs::store::tests::sleeps_when_asked",
        "--ignored",
    ]);
    sleep
}

#[cfg(windows)]
const SLEEPER: &str = "CAM_TEST_SLEEPER";

#[cfg(windows)]
#[test]
#[ignore = "the process dead_owner starts"]
fn sleeps_when_asked() {
    if std::env::var_os(SLEEPER).is_some() {
        std::thread::sleep(Duration::from_secs(60));
    }
}
