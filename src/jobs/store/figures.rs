//! The store's figures, printed, not asserted (speed is no test's business):
//! `cargo test --release -- --ignored store_figures --nocapture`.

use std::path::Path;
use std::time::{Duration, Instant};

use cli_agent_engine::AgentEvent;
use cli_agent_test_support::common::temp_dir;

use super::tests::{insert, outcome};
use super::*;

const JOBS: usize = 1000;
const EVENTS_PER_JOB: usize = 50;
const STREAM_EVENTS: usize = 200_000;

#[test]
#[ignore = "prints figures; run with --release --ignored --nocapture"]
fn store_figures() {
    let dir = temp_dir("store-figures");
    let store = Store::open_with(dir.path(), 16 * 1024 * 1024).unwrap();
    record_jobs(&store, dir.path());
    list_latency(&store);
    feed_latency(&store);
    stream_cost(&store, dir.path());
}

/// Jobs recorded per second (insert, events through a recorder, flush, finish), bytes on disk.
fn record_jobs(store: &Store, dir: &Path) {
    let event = text_event(100);
    let started = Instant::now();
    for _ in 0..JOBS {
        let id = insert(
            store,
            cli_agent_engine::clis::CODEX,
            dir,
            JobStatus::Running,
        );
        let recorder = store.recorder(&id);
        for _ in 0..EVENTS_PER_JOB {
            recorder.events(std::slice::from_ref(&event));
        }
        recorder.flush();
        store
            .finish(&id, JobStatus::Completed, &outcome(&"answer ".repeat(100)))
            .unwrap();
    }
    let elapsed = started.elapsed();
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let bytes = std::fs::metadata(store.path()).unwrap().len();
    println!(
        "store: {JOBS} jobs of {EVENTS_PER_JOB} events recorded in {:.2} s: {:.0} jobs/s, {} bytes per job on disk",
        elapsed.as_secs_f64(),
        JOBS as f64 / elapsed.as_secs_f64(),
        bytes / JOBS as u64
    );
}

/// `list` (limit 50) over the jobs recorded.
fn list_latency(store: &Store) {
    let filter = ListFilter::default();
    latency(&format!("list of 50 over {JOBS} jobs"), || {
        assert_eq!(store.list(&filter).unwrap().len(), 50);
    });
}

/// The dashboard's feed over the jobs recorded: its first page, and a poll when nothing
/// changed (what every open page costs every 500 ms).
fn feed_latency(store: &Store) {
    latency(&format!("the feed's first 200 of {JOBS} jobs"), || {
        assert_eq!(store.feed_start(200).unwrap().jobs.len(), 200);
    });
    let cursor = store.feed_start(1).unwrap().cursor;
    latency("a feed poll with nothing changed", || {
        assert!(store.changed_since(cursor, 500).unwrap().jobs.is_empty());
    });
}

/// p50 and p95 of 200 runs of `query`.
fn latency(what: &str, mut query: impl FnMut()) {
    let mut samples: Vec<Duration> = (0..200)
        .map(|_| {
            let started = Instant::now();
            query();
            started.elapsed()
        })
        .collect();
    samples.sort();
    println!(
        "store: {what}: p50 {:.3} ms, p95 {:.3} ms",
        samples[samples.len() / 2].as_secs_f64() * 1e3,
        samples[samples.len() * 95 / 100].as_secs_f64() * 1e3
    );
}

/// What recording a 200000-event stream costs: the caller's time per event, and the CPU the
/// whole process (writer thread included) spent.
fn stream_cost(store: &Store, dir: &Path) {
    let id = insert(
        store,
        cli_agent_engine::clis::CODEX,
        dir,
        JobStatus::Running,
    );
    let recorder = store.recorder(&id);
    let event = text_event(80);
    let cpu_before = process_cpu();
    let writer_before = writer_cpu();
    let started = Instant::now();
    for _ in 0..STREAM_EVENTS {
        recorder.events(std::slice::from_ref(&event));
    }
    let calls = started.elapsed();
    recorder.flush();
    let total = started.elapsed();
    let cpu = process_cpu() - cpu_before;
    let writer = writer_cpu() - writer_before;
    let info = store.get(&id).unwrap().unwrap().transcript;
    println!(
        "store: {STREAM_EVENTS} events ({} MB kept, {} MB dropped by the cap): {:.0} ns per event() call, \
         {:.2} s until flushed, {:.2} CPU-seconds in all, {:.2} of them in the writer threads",
        info.bytes / 1_000_000,
        info.dropped_bytes / 1_000_000,
        calls.as_nanos() as f64 / STREAM_EVENTS as f64,
        total.as_secs_f64(),
        cpu,
        writer
    );
}

fn text_event(chars: usize) -> AgentEvent {
    AgentEvent::Text {
        text: "x".repeat(chars),
        delta: true,
    }
}

/// User and system CPU-seconds of this process so far.
fn process_cpu() -> f64 {
    cli_agent_engine::platform::cpu_time().as_secs_f64()
}

/// The same for the store's writer threads (named `job-store-writer`, cut to 15 characters),
/// read per thread from `/proc`: Linux only, 0 elsewhere.
fn writer_cpu() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    tasks
        .map(|task| task.unwrap().path())
        .filter(|task| {
            std::fs::read_to_string(task.join("comm"))
                .is_ok_and(|comm| comm.starts_with("job-store-wr"))
        })
        .map(|task| cpu_seconds(&task.join("stat").to_string_lossy()))
        .sum()
}

/// Fields 14 and 15 (utime, stime) of a `stat` file, in seconds.
fn cpu_seconds(stat: &str) -> f64 {
    let stat = std::fs::read_to_string(stat).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    let ticks: f64 =
        fields[14 - 3].parse::<f64>().unwrap() + fields[15 - 3].parse::<f64>().unwrap();
    // CLK_TCK is 100 on Linux.
    ticks / 100.0
}
