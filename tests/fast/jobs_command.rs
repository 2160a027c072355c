//! `cli-agent-mcp jobs` end to end: the real binary on a store in a temp dir (CAM_STATE_DIR).
//! Until `run` and `serve` record jobs, the test seeds rows with rusqlite into the database
//! the binary created, as another process would; this process plays the owning server.

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::temp_dir;
use rusqlite::{Connection, params};
use serde_json::{Value, json};
use tempfile::TempDir;

const DB_FILE: &str = "jobs.sqlite3";

fn jobs(state: &Path) -> Command {
    let mut cmd = common::cam_command();
    cmd.arg("jobs")
        .env("CAM_STATE_DIR", state)
        .env("CAM_CONFIG", common::NO_CONFIG)
        .env_remove("CAM_LOG")
        .env_remove("CAM_JOB_RETENTION_DAYS")
        .stdin(Stdio::null());
    cmd
}

fn run(state: &Path, args: &[&str]) -> Output {
    jobs(state).args(args).output().expect("run jobs")
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("no JSON on stdout ({error}): {output:?}"))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A state dir whose store the binary created (`jobs` on an empty dir makes it).
fn store(name: &str) -> (TempDir, Connection) {
    let dir = temp_dir(name);
    let listed = run(dir.path(), &[]);
    assert!(listed.status.success(), "{listed:?}");
    assert!(listed.stdout.is_empty(), "{listed:?}");
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    conn.busy_timeout(Duration::from_secs(30)).unwrap();
    (dir, conn)
}

/// When the process started, as the store records its owners: with the pid, it tells the
/// process from a later one with the same pid.
fn start_of(pid: u32) -> u64 {
    cli_agent_engine::platform::process_start(pid).expect("a live process")
}

fn me() -> (u32, u64) {
    (std::process::id(), start_of(std::process::id()))
}

/// A process that existed and is gone.
fn gone() -> (u32, u64) {
    let mut child = if cfg!(windows) {
        Command::new("ping").args(["-n", "60", "127.0.0.1"]).spawn()
    } else {
        Command::new("sleep").arg("60").spawn()
    }
    .unwrap();
    let owner = (child.id(), start_of(child.id()));
    child.kill().unwrap();
    child.wait().unwrap();
    owner
}

struct Seed<'a> {
    id: &'a str,
    agent: &'a str,
    status: &'a str,
    created_ms: u64,
    owner: (u32, u64),
    answer: Option<&'a str>,
    error: Value,
}

impl<'a> Seed<'a> {
    fn new(id: &'a str, status: &'a str, created_ms: u64) -> Self {
        Self {
            id,
            agent: "codex",
            status,
            created_ms,
            owner: me(),
            answer: None,
            error: Value::Null,
        }
    }

    fn insert(&self, conn: &Connection) {
        let finished = !matches!(self.status, "queued" | "running");
        let outcome = finished.then(|| {
            json!({
                "agent": self.agent, "status": "completed", "session_id": "s-1", "reasoning": null,
                "tools": {"calls": 0, "failed": 0, "recent": []}, "usage": null,
                "exit_code": 0, "exit_signal": null, "duration_ms": 5, "stderr_tail": "",
                "warnings": [], "error": self.error,
            })
            .to_string()
        });
        conn.execute(
            "INSERT INTO jobs (id, agent, origin, status, workspace, permission, prompt_preview,
                created_ms, started_ms, finished_ms, owner_pid, owner_start, progress,
                session_id, answer, answer_chars, outcome)
             VALUES (?1, ?2, 'background', ?3, '/work/space', 'read-only', 'say hello',
                ?4, ?4, ?5, ?6, ?7, 'running `ls`', 's-1', ?8, ?9, ?10)",
            params![
                self.id,
                self.agent,
                self.status,
                self.created_ms,
                finished.then_some(self.created_ms + 1500),
                self.owner.0,
                self.owner.1,
                self.answer,
                self.answer
                    .map_or(0, |answer| answer.chars().count() as u64),
                outcome,
            ],
        )
        .unwrap();
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn status_of(conn: &Connection, id: &str) -> String {
    conn.query_row("SELECT status FROM jobs WHERE id = ?1", [id], |row| {
        row.get(0)
    })
    .unwrap()
}

const A: &str = "job_aaaaaaaaaaaaaaaa";
const B: &str = "job_bbbbbbbbbbbbbbbb";
const C: &str = "job_cccccccccccccccc";

#[test]
fn jobs_lists_newest_first_and_filters_by_status_and_agent() {
    let (dir, conn) = store("jobs-list");
    let now = now_ms();
    Seed::new(A, "completed", now - 3000).insert(&conn);
    Seed {
        agent: "claude",
        ..Seed::new(B, "running", now - 2000)
    }
    .insert(&conn);
    Seed::new(C, "failed", now - 1000).insert(&conn);

    let ids = |output: Output| -> Vec<String> {
        assert!(output.status.success(), "{output:?}");
        let listed = stdout_json(&output);
        listed
            .as_array()
            .unwrap()
            .iter()
            .map(|job| job["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(run(dir.path(), &["--json"])), [C, B, A]);
    assert_eq!(
        ids(run(dir.path(), &["--json", "--status", "completed"])),
        [A]
    );
    assert_eq!(ids(run(dir.path(), &["--json", "--agent", "claude"])), [B]);
    assert_eq!(ids(run(dir.path(), &["--json", "--limit", "2"])), [C, B]);

    let table = run(dir.path(), &[]);
    let text = String::from_utf8(table.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("ID") && lines[1].starts_with(C) && lines[3].starts_with(A));
    assert!(
        lines[2].contains("running") && lines[2].contains("claude"),
        "{text}"
    );
}

#[test]
fn jobs_result_prints_the_whole_answer_exactly_and_nothing_else() {
    let (dir, conn) = store("jobs-result");
    let answer = "Hello — 世界 🦀\n\nline two, no newline at the end";
    Seed {
        answer: Some(answer),
        ..Seed::new(A, "completed", now_ms())
    }
    .insert(&conn);

    let output = run(dir.path(), &["result", A]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(output.stdout, answer.as_bytes());
    let json = stdout_json(&run(dir.path(), &["result", A, "--json"]));
    assert_eq!(json["outcome"]["answer"], answer);
    assert_eq!(json["job"]["status"], "completed");
}

#[test]
fn jobs_result_of_a_failed_job_prints_its_answer_and_why_and_exits_1() {
    let (dir, conn) = store("jobs-result-failed");
    let error = json!({"kind": "rate_limited", "message": "429 slow down", "hint": "wait"});
    Seed {
        answer: Some("partial"),
        error,
        ..Seed::new(A, "failed", now_ms())
    }
    .insert(&conn);
    Seed::new(B, "running", now_ms()).insert(&conn);

    let failed = run(dir.path(), &["result", A]);
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
    assert_eq!(failed.stdout, b"partial");
    assert!(stderr(&failed).contains("429 slow down"), "{failed:?}");
    let running = run(dir.path(), &["result", B]);
    assert_eq!(running.status.code(), Some(1), "{running:?}");
    assert!(running.stdout.is_empty());
    assert!(stderr(&running).contains("still running"), "{running:?}");
}

#[test]
fn jobs_result_transcript_prints_the_events_with_the_dropped_middle() {
    let (dir, conn) = store("jobs-transcript");
    Seed::new(A, "completed", now_ms()).insert(&conn);
    let chunk = |first: u64, lines: &str| {
        let events = lines.lines().count() as u64;
        conn.execute(
            "INSERT INTO chunks (job_id, first_event, events, bytes, head, lines)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![A, first, events, lines.len() as u64, first == 0, lines],
        )
        .unwrap();
    };
    chunk(
        0,
        "{\"type\":\"text\",\"text\":\"0\"}\n{\"type\":\"text\",\"text\":\"1\"}\n",
    );
    chunk(5, "{\"type\":\"text\",\"text\":\"5\"}\n");
    conn.execute(
        "UPDATE jobs SET events = 3, event_bytes = 81, dropped_events = 3, dropped_bytes = 90
         WHERE id = ?1",
        [A],
    )
    .unwrap();

    let output = run(dir.path(), &["result", A, "--transcript"]);
    assert!(output.status.success(), "{output:?}");
    let lines: Vec<Value> = output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            json!({"type": "text", "text": "0"}),
            json!({"type": "text", "text": "1"}),
            json!({"type": "dropped", "events": 3, "bytes": 90}),
            json!({"type": "text", "text": "5"}),
        ]
    );
}

#[test]
fn jobs_show_tells_the_state_progress_and_transcript() {
    let (dir, conn) = store("jobs-show");
    Seed::new(A, "running", now_ms()).insert(&conn);
    let output = run(dir.path(), &["show", A]);
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "running",
        "running `ls`",
        "pid",
        "(alive)",
        "0 events",
        "say hello",
    ] {
        assert!(text.contains(expected), "{expected:?} not in {text}");
    }
    let json = stdout_json(&run(dir.path(), &["show", A, "--json"]));
    assert_eq!(json["progress"], "running `ls`");
    assert_eq!(json["owner"]["pid"], std::process::id());
}

#[test]
fn a_malformed_id_exits_2_and_an_unknown_one_exits_1_each_saying_why() {
    let (dir, _conn) = store("jobs-ids");
    for args in [
        &["show", "12345"][..],
        &["result", "job_x"],
        &["cancel", "JOB_AAAAAAAAAAAAAAAA"],
    ] {
        let output = run(dir.path(), args);
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert!(stderr(&output).contains("is not a job id"), "{output:?}");
    }
    for args in [&["show", A][..], &["result", A], &["cancel", A]] {
        let output = run(dir.path(), args);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert!(
            stderr(&output).contains(&format!("no job {A}")),
            "{output:?}"
        );
    }
}

/// Plays the owning server: waits for the cancel request, then records the job cancelled.
fn serve_cancel(conn: &Connection, id: &str, cancel: &mut Child) {
    let deadline = Instant::now() + common::DEADLINE;
    loop {
        let requested: bool = conn
            .query_row(
                "SELECT cancel_requested FROM jobs WHERE id = ?1",
                [id],
                |row| row.get(0),
            )
            .unwrap();
        if requested {
            break;
        }
        assert!(
            cancel.try_wait().unwrap().is_none(),
            "jobs cancel ended before asking"
        );
        assert!(
            Instant::now() < deadline,
            "no cancel request within the deadline"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    conn.execute(
        "UPDATE jobs SET status = 'cancelled', finished_ms = ?2 WHERE id = ?1",
        params![id, now_ms()],
    )
    .unwrap();
}

#[test]
fn jobs_cancel_asks_the_live_owner_and_reports_the_cancel() {
    let (dir, conn) = store("jobs-cancel");
    Seed::new(A, "running", now_ms()).insert(&conn);
    let mut cancel = jobs(dir.path())
        .args(["cancel", A])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    serve_cancel(&conn, A, &mut cancel);
    let output = cancel.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("job {A} cancelled\n")
    );
}

#[test]
fn jobs_cancel_of_an_ended_job_or_a_gone_server_exits_1_and_says_so() {
    let (dir, conn) = store("jobs-cancel-no");
    Seed::new(A, "completed", now_ms()).insert(&conn);
    Seed {
        owner: gone(),
        ..Seed::new(B, "running", now_ms())
    }
    .insert(&conn);

    let ended = run(dir.path(), &["cancel", A]);
    assert_eq!(ended.status.code(), Some(1), "{ended:?}");
    assert!(
        stderr(&ended).contains("already ended (completed)"),
        "{ended:?}"
    );
    let orphan = run(dir.path(), &["cancel", B, "--json"]);
    assert_eq!(orphan.status.code(), Some(1), "{orphan:?}");
    assert_eq!(stdout_json(&orphan)["result"], "owner_gone");
    assert!(stderr(&orphan).contains("is gone"), "{orphan:?}");
    assert_eq!(status_of(&conn, B), "interrupted");
}

#[test]
fn listing_marks_the_jobs_of_a_killed_server_interrupted() {
    let (dir, conn) = store("jobs-orphans");
    Seed {
        owner: gone(),
        ..Seed::new(A, "running", now_ms())
    }
    .insert(&conn);
    Seed::new(B, "running", now_ms()).insert(&conn);
    let listed = stdout_json(&run(dir.path(), &["--json"]));
    let status = |id: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|job| job["id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(
        (status(A), status(B)),
        (json!("interrupted"), json!("running"))
    );
}

#[test]
fn jobs_prune_removes_old_finished_jobs_only() {
    let (dir, conn) = store("jobs-prune");
    let day = 24 * 3600 * 1000;
    Seed::new(A, "completed", now_ms() - 10 * day).insert(&conn);
    Seed::new(B, "completed", now_ms() - 2000).insert(&conn);
    Seed::new(C, "running", now_ms() - 10 * day).insert(&conn);
    let output = run(dir.path(), &["prune", "--json"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        stdout_json(&output),
        json!({"pruned": 1, "older_than_days": 7})
    );
    let left: Vec<String> = conn
        .prepare("SELECT id FROM jobs ORDER BY id")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(left, [B, C]);
    let none = run(dir.path(), &["prune", "--older-than-days", "0"]);
    assert!(
        String::from_utf8_lossy(&none.stdout).starts_with("pruned 1 finished jobs"),
        "{none:?}"
    );
}

#[test]
fn an_unusable_state_dir_is_an_error_that_names_the_fix() {
    let dir = temp_dir("jobs-unusable");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let output = run(&file.join("state"), &[]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let message = stderr(&output);
    assert!(
        message.contains("CAM_STATE_DIR") && message.contains("a-file"),
        "{message}"
    );
}
