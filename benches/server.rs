//! Benchmarks of the MCP server, printed as a table: `cargo bench --bench server`.
//!
//! It drives the built binary over stdio with the client in tests/mcp and the fake CLI:
//! 1. Cold start: from spawning the server to the `initialize` response; p50 and p95 of 20.
//! 2. Idle memory: the server's RSS after `initialize` and `tools/list`.
//! 3. Load: 50 concurrent calls of the fake (each streams events for 3 s, with progress): the
//!    server's peak RSS and the CPU time it used, and the wall time to the last answer.
//! 4. Cancel latency: from writing `notifications/cancelled` to the moment no process of the
//!    call is left (the CLI, its child and a process in its own session: each gone or a
//!    zombie, polled every 0.5 ms); p50 and p99 of 100.
//! 5. Guardian: from SIGKILL of the server to the last process of 5 runs gone (each CLI ignores
//!    SIGINT/SIGTERM and leaves group children, a session child, a daemon and a stdout holder:
//!    35 processes), p50 and p99 of 20; what the guardian costs the server's start (its spawn,
//!    timed as the server does it), and the guardian's RSS.
//!
//! The fake CLI is a Python script, so the load figures include 50 interpreters on the same
//! cores. No harness, only `std::time::Instant`; about a minute on two cores. Under
//! `cargo test --all-targets` (no `--bench` argument) it runs a few of each, as a smoke test.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/mcp/mod.rs"]
mod mcp;

use std::time::{Duration, Instant};

use mcp::Server;
use serde_json::json;

/// How many of each measurement.
#[derive(Clone, Copy)]
struct Sizes {
    cold_starts: usize,
    concurrent: usize,
    cancels: usize,
    kills: usize,
}

const BENCH: Sizes = Sizes {
    cold_starts: 20,
    concurrent: 50,
    cancels: 100,
    kills: 20,
};
const SMOKE: Sizes = Sizes {
    cold_starts: 2,
    concurrent: 4,
    cancels: 3,
    kills: 2,
};

fn main() {
    let sizes = if std::env::args().any(|arg| arg == "--bench") {
        BENCH
    } else {
        println!("smoke test only: `cargo bench --bench server` gives the figures");
        SMOKE
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("build the tokio runtime");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "cli-agent-mcp server benchmarks ({cores} cores, {})",
        mcp::binary()
    );
    runtime.block_on(async {
        report_cold_start(sizes.cold_starts).await;
        report_idle_memory().await;
        report_load(sizes.concurrent).await;
        report_cancel_latency(sizes.cancels).await;
        report_guardian(sizes.kills).await;
    });
}

async fn report_cold_start(count: usize) {
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let mut server = Server::builder().spawn();
        server.initialize().await;
        times.push(started.elapsed());
        server.close_stdin();
        server.wait_exit(Duration::from_secs(30)).await;
    }
    println!(
        "cold start to initialize response: p50 {} p95 {} ({count} starts)",
        ms(percentile(&mut times, 50)),
        ms(percentile(&mut times, 95))
    );
}

async fn report_idle_memory() {
    let mut server = Server::start().await;
    let id = server.request("tools/list", json!({})).await;
    server.result(id).await;
    let status = ProcStatus::read(server.pid());
    println!("idle RSS: {} MiB", mib(status.rss_kib));
}

async fn report_load(concurrent: usize) {
    let mut server = Server::start().await;
    let before = cpu_seconds(server.pid());
    let started = Instant::now();
    let mut ids = Vec::with_capacity(concurrent);
    for n in 0..concurrent {
        let agent = mcp::AGENTS[n % mcp::AGENTS.len()];
        let token = format!("load-{n}");
        let arguments = json!({"prompt": "stream=3 tool"});
        ids.push(server.start_call(agent, arguments, Some(&token)).await);
    }
    for id in ids {
        let result = server.result(id).await;
        assert_eq!(result["isError"], false, "{result}");
    }
    let wall = started.elapsed();
    let cpu = cpu_seconds(server.pid()) - before;
    let status = ProcStatus::read(server.pid());
    println!(
        "{concurrent} concurrent fake runs (3 s each): wall {}, server CPU {cpu:.2} s \
         ({:.0}% of one core), peak RSS {} MiB",
        ms(wall),
        100.0 * cpu / wall.as_secs_f64(),
        mib(status.peak_rss_kib)
    );
}

async fn report_cancel_latency(count: usize) {
    let mut server = Server::start().await;
    let dir = common::TempDir::new("bench-cancel");
    let mut latencies = Vec::with_capacity(count);
    for n in 0..count {
        let tag = common::unique("bench-cancel");
        let pid_file = dir.path().join(format!("cli-{n}.pid"));
        let prompt = format!(
            "hang children=1 session-child tag={tag} pid-out={}",
            pid_file.display()
        );
        let id = server
            .start_call("codex", json!({"prompt": prompt}), None)
            .await;
        let mut pids = wait_for_pids(&tag, 2).await;
        pids.push(read_pid(&pid_file));
        let sent = Instant::now();
        server.cancel(id, "benchmark").await;
        latencies.push(until_dead(&pids, sent, "the tree outlived a cancel").await);
    }
    println!(
        "cancel to tree gone: p50 {} p99 {} ({count} cancels)",
        ms(percentile(&mut latencies, 50)),
        ms(percentile(&mut latencies, 99))
    );
}

/// Directives of a CLI that leaves a process everywhere one can hide, and ignores SIGINT/SIGTERM.
const CONTAINED: &str =
    "hang ignore-signals children=2 stubborn-children=1 session-child daemon hold-stdout";
const RUNS: usize = 5;
/// Per run: the CLI and the 6 processes it leaves.
const PROCESSES_PER_RUN: usize = 7;

async fn report_guardian(kills: usize) {
    let mut latencies = Vec::with_capacity(kills);
    for _ in 0..kills {
        let mut server = Server::start().await;
        let tag = common::unique("bench-guardian");
        for n in 0..RUNS {
            let agent = mcp::AGENTS[n % mcp::AGENTS.len()];
            let prompt = format!("{CONTAINED} tag={tag}");
            server
                .start_call(agent, json!({"prompt": prompt}), None)
                .await;
        }
        let marker = format!("CAM_RUN_ID={}.", server.pid());
        common::wait_until("every process of the runs is up", || {
            common::pids_with_env_prefix(&marker).len() >= RUNS * PROCESSES_PER_RUN
        })
        .await;
        let pids = common::pids_with_env_prefix(&marker);
        let killed = Instant::now();
        server.signal(nix::sys::signal::Signal::SIGKILL);
        latencies.push(until_dead(&pids, killed, "processes outlived the server").await);
    }
    println!(
        "server SIGKILL to the last of {} processes of {RUNS} runs gone: p50 {} p99 {} ({kills} kills)",
        RUNS * PROCESSES_PER_RUN,
        ms(percentile(&mut latencies, 50)),
        ms(percentile(&mut latencies, 99))
    );
    report_guardian_cost(kills).await;
}

/// The guardian's spawn, timed exactly as the server pays it, and its RSS once it waits.
async fn report_guardian_cost(count: usize) {
    let mut spawns = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let mut guardian = std::process::Command::new(mcp::binary())
            .args(["__guardian", "CAM_RUN_ID=1.0-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start a guardian");
        spawns.push(started.elapsed());
        drop(guardian.stdin.take());
        guardian.wait().expect("the guardian exits on EOF");
    }
    let server = Server::start().await;
    let guardian = common::guardian_of(server.pid()).expect("the server's guardian");
    common::wait_until("the guardian waits on its pipe", || {
        std::fs::read_to_string(format!("/proc/{guardian}/wchan"))
            .is_ok_and(|w| w.contains("pipe_read"))
    })
    .await;
    let status = ProcStatus::read(guardian);
    println!(
        "guardian: its spawn takes {} (p50; p95 {}) of the server's start; RSS {} MiB, \
         of which {} MiB private",
        ms(percentile(&mut spawns, 50)),
        ms(percentile(&mut spawns, 95)),
        mib(status.rss_kib),
        mib(status.anon_kib)
    );
}

/// The pids of the tagged processes of a call, once `count` of them run.
async fn wait_for_pids(tag: &str, count: usize) -> Vec<i32> {
    common::wait_for_tagged(tag, count).await;
    common::tagged_pids(tag)
}

/// The pid the fake wrote with `pid-out` (before it started its children).
fn read_pid(path: &std::path::Path) -> i32 {
    let text = std::fs::read_to_string(path).expect("the fake wrote its pid");
    text.trim().parse().expect("a pid")
}

/// Poll every 0.5 ms until none of `pids` is alive; how long that took since `since`.
async fn until_dead(pids: &[i32], since: Instant, failure: &str) -> Duration {
    while pids.iter().any(|&pid| alive(pid)) {
        tokio::time::sleep(Duration::from_micros(500)).await;
        assert!(since.elapsed() < Duration::from_secs(30), "{failure}");
    }
    since.elapsed()
}

/// Alive and not yet a zombie: a zombie is dead, only waiting for its parent to reap it.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

struct ProcStatus {
    rss_kib: u64,
    peak_rss_kib: u64,
    /// The private part of the RSS; the rest is file pages (the binary), shared with others.
    anon_kib: u64,
}

impl ProcStatus {
    fn read(pid: i32) -> Self {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        };
        Self {
            rss_kib: field("VmRSS:"),
            peak_rss_kib: field("VmHWM:"),
            anon_kib: field("RssAnon:"),
        }
    }
}

/// User plus system CPU time of `pid`, in seconds.
fn cpu_seconds(pid: i32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, utime 14 and stime 15 (1-based, proc(5)).
    let ticks = |index: usize| fields.get(index - 3).and_then(|f| f.parse::<u64>().ok());
    let total = ticks(14).unwrap_or(0) + ticks(15).unwrap_or(0);
    // SAFETY: sysconf only reads a constant of the system.
    let per_second = unsafe { nix::libc::sysconf(nix::libc::_SC_CLK_TCK) }.max(1);
    total as f64 / per_second as f64
}

fn percentile(samples: &mut [Duration], pct: usize) -> Duration {
    samples.sort();
    let rank = (samples.len() * pct).div_ceil(100).max(1) - 1;
    samples[rank.min(samples.len() - 1)]
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}
