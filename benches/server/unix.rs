//! The server bench on Linux and macOS (see `server.rs`).

use std::time::{Duration, Instant};

use cli_agent_engine::platform;
use cli_agent_test_support::synthetic_repo::{Checkout, SyntheticRepo, median, timed};
use cli_agent_test_support::{common, long_run, mcp, synthetic_repo};
use mcp::Server;
use serde_json::json;
use tempfile::TempDir;

/// How many of each measurement.
#[derive(Clone, Copy)]
struct Sizes {
    cold_starts: usize,
    /// Jobs in the large store the cold starts open.
    large_store: usize,
    concurrent: usize,
    cancels: usize,
    kills: usize,
    stream_events: usize,
    /// Events of the busy CLI's stream, written at [`PACE`] a second.
    paced_events: usize,
    cycles: usize,
    jobs: usize,
    repository_files: usize,
    isolation_runs: usize,
}

const BENCH: Sizes = Sizes {
    cold_starts: 20,
    large_store: 2000,
    concurrent: 200,
    cancels: 100,
    kills: 20,
    stream_events: 200_000,
    paced_events: 100_000,
    cycles: 2000,
    jobs: 1000,
    repository_files: 50_000,
    isolation_runs: 5,
};
const SMOKE: Sizes = Sizes {
    cold_starts: 2,
    large_store: 10,
    concurrent: 4,
    cancels: 3,
    kills: 2,
    stream_events: 2000,
    paced_events: 1000,
    cycles: 10,
    jobs: 10,
    repository_files: 300,
    isolation_runs: 1,
};

pub fn main() {
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
        common::binary()
    );
    // `cargo bench --bench server -- stream stress` runs only the sections named.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let wanted = |section: &str| only.is_empty() || only.iter().any(|name| name == section);
    runtime.block_on(async {
        if wanted("cold") {
            report_cold_start(sizes.cold_starts, sizes.large_store).await;
        }
        if wanted("idle") {
            report_idle_memory().await;
        }
        if wanted("tools") {
            report_tool_list().await;
        }
        if wanted("load") {
            report_load(sizes.concurrent).await;
        }
        if wanted("cancel") {
            report_cancel_latency(sizes.cancels).await;
        }
        if wanted("stream") {
            report_stream_throughput(sizes.stream_events, sizes.paced_events).await;
        }
        if wanted("guardian") {
            report_guardian(sizes.kills).await;
        }
        if wanted("stress") {
            report_start_cancel_stress(sizes.cycles).await;
        }
        if wanted("jobs") {
            report_job_store(sizes.jobs).await;
        }
        if wanted("isolation") {
            report_isolation(sizes.repository_files, sizes.isolation_runs).await;
        }
    });
}

/// The most a cold start may take, spawn to the `initialize` response.
const COLD_START_GOAL: Duration = Duration::from_millis(15);
/// The most the npm launcher's start to the `initialize` response may take, as a multiple of
/// Node.js's own start.
const LAUNCHER_GOAL: f64 = 1.2;

async fn report_cold_start(count: usize, jobs: usize) {
    let large = common::temp_dir("bench-large-store");
    let mut server = store_server(large.path()).await;
    record_background_jobs(&mut server, jobs).await;
    server.close_stdin();
    server.wait_exit(Duration::from_secs(30)).await;
    let (mut fresh, mut existing) = (Vec::with_capacity(count), Vec::with_capacity(count));
    // Taking turns, so that a machine whose speed drifts slows both alike.
    for _ in 0..count {
        fresh.push(cold_start(host_started()).await);
        existing.push(cold_start(host_started().env("CAM_STATE_DIR", large.path())).await);
    }
    let megabytes = dir_bytes(large.path()) as f64 / 1e6;
    for (store, times) in [
        ("a new job store".to_owned(), &mut fresh),
        (
            format!("{jobs} jobs in the store ({megabytes:.1} MB)"),
            &mut existing,
        ),
    ] {
        let p50 = percentile(times, 50);
        println!(
            "cold start to initialize response, {store}: p50 {} p95 {} ({count} starts; goal {}{})",
            ms(p50),
            ms(percentile(times, 95)),
            ms(COLD_START_GOAL),
            missed(p50 > COLD_START_GOAL)
        );
    }
    report_launcher_start(count).await;
}

/// The npm launcher (`packaging/npm/bin/cli-agent-mcp.js`, run by the machine's Node.js, the
/// binary given by `CLI_AGENT_MCP_BINARY`) from its spawn to the `initialize` response,
/// against Node.js's own start (`node -e ''`, spawn to exit), taking turns.
async fn report_launcher_start(count: usize) {
    let launcher =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/npm/bin/cli-agent-mcp.js");
    let (mut node, mut launched) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for _ in 0..count {
        let started = Instant::now();
        let status = std::process::Command::new("node").args(["-e", ""]).status();
        if !status.is_ok_and(|status| status.success()) {
            println!("npm launcher: no Node.js on PATH to start it with");
            return;
        }
        node.push(started.elapsed());
        let builder = Server::bare_program("node")
            .arg(&launcher)
            .env("CLI_AGENT_MCP_BINARY", common::binary())
            .env("CAM_SANDBOX", "off");
        launched.push(cold_start(builder).await);
    }
    let (node, launched) = (percentile(&mut node, 50), percentile(&mut launched, 50));
    let ratio = launched.as_secs_f64() / node.as_secs_f64();
    println!(
        "cold start through the npm launcher: p50 {} vs {} for Node.js's own start ({ratio:.2}x; \
         goal {LAUNCHER_GOAL}x{})",
        ms(launched),
        ms(node),
        missed(ratio > LAUNCHER_GOAL)
    );
}

/// Spawn to the `initialize` response; then the server is closed and waited for, and its
/// guardian too: the guardian's exit looks for processes left behind (a few ms of CPU), and
/// the next start would take turns with it, as no host's start of a server does.
async fn cold_start(builder: mcp::Builder) -> Duration {
    let started = Instant::now();
    let mut server = builder.spawn();
    server.initialize().await;
    let took = started.elapsed();
    server.close_stdin();
    server.wait_exit(Duration::from_secs(30)).await;
    let pid = server.pid();
    common::wait_until("the closed server's guardian to exit", || {
        !common::guardian_alive(pid)
    })
    .await;
    took
}

/// Marks a figure that misses its goal, so that a drop shows.
fn missed(missed: bool) -> &'static str {
    if missed { ", MISSED" } else { "" }
}

/// The bytes of the files in `dir` (not below it).
fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.metadata().ok())
        .map(|meta| meta.len())
        .sum()
}

async fn report_idle_memory() {
    let mut server = started(bench_server()).await;
    let id = server.request("tools/list", json!({})).await;
    server.result(id).await;
    let status = ProcStatus::read(server.pid());
    println!("idle RSS: {} MiB", mib(status.rss_kib));
}

/// The most of `tools/list` the host's model may read with eight CLIs installed.
const TOOL_LIST_GOAL: usize = 16 * 1024;
/// The CLIs the goal counts (the six built in, pi and Cline).
const GOAL_CLIS: usize = 8;

async fn report_tool_list() {
    let (every, coming) = listed(bench_server()).await;
    let installed = ["codex", "claude"];
    let mut two = bench_server().env("CAM_NO_LOGIN_SHELL", "1");
    for agent in mcp::agents().into_iter().filter(|a| !installed.contains(a)) {
        two = two.env(&mcp::bin_env_var(agent), common::unique("bench-absent"));
    }
    let (two, _) = listed(two).await;
    for ((bytes, instructions), clis) in [(every, "every CLI"), (two, "two CLIs")] {
        println!(
            "tools/list, {clis} installed ({} agent tools): the model reads {} bytes ({} an agent \
             tool, {} the job tools), the whole result {} bytes; the instructions {instructions} \
             bytes",
            bytes.agent_tools,
            bytes.read,
            bytes.agents_read / bytes.agent_tools.max(1),
            bytes.read - bytes.agents_read,
            bytes.whole,
        );
    }
    let eight = every.0.read_with(GOAL_CLIS, coming);
    println!(
        "tools/list with {GOAL_CLIS} CLIs and {coming} bytes more an agent tool (for the \
         arguments still to come of {:?}): the model reads {eight} bytes (goal at most \
         {TOOL_LIST_GOAL}{})",
        mcp::COMING_ARGUMENTS,
        missed(eight > TOOL_LIST_GOAL)
    );
}

/// A server's `tools/list` weighed with the length of its instructions, and the bytes its agent
/// tools are still to grow by.
async fn listed(builder: mcp::Builder) -> ((mcp::ListedBytes, usize), usize) {
    let mut server = builder.spawn();
    let init = server.initialize().await;
    let id = server.request("tools/list", json!({})).await;
    let list = server.result(id).await;
    let instructions = init["instructions"].as_str().map_or(0, str::len);
    let weighed = (mcp::ListedBytes::of(&list), instructions);
    (weighed, mcp::still_to_come(&list))
}

/// The most the server's RSS may reach with [`Sizes::concurrent`] runs going.
const LOAD_PEAK_RSS_GOAL_MIB: f64 = 64.0;

async fn report_load(concurrent: usize) {
    // All at once: the figure is the cost of concurrent runs, not the queue's.
    let mut server = bench_server()
        .env("CAM_MAX_RUNS", concurrent.to_string())
        .spawn();
    server.initialize().await;
    let before = cpu_seconds(server.pid());
    let started = Instant::now();
    let mut ids = Vec::with_capacity(concurrent);
    let agents = mcp::agents();
    for n in 0..concurrent {
        let agent = agents[n % agents.len()];
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
    let peak = status.peak_rss_kib.map(|kib| kib as f64 / 1024.0);
    println!(
        "{concurrent} concurrent fake runs (3 s each): wall {}, server CPU {cpu:.2} s \
         ({:.0}% of one core), peak RSS {} MiB (goal at most {LOAD_PEAK_RSS_GOAL_MIB:.0}{})",
        ms(wall),
        100.0 * cpu / wall.as_secs_f64(),
        mib(status.peak_rss_kib),
        missed(peak.is_some_and(|peak| peak > LOAD_PEAK_RSS_GOAL_MIB))
    );
}

/// The longest a cancel may take to tear a run's tree down.
const CANCEL_GOAL: Duration = Duration::from_millis(50);

async fn report_cancel_latency(count: usize) {
    let mut server = started(bench_server()).await;
    let dir = common::temp_dir("bench-cancel");
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
    let worst = latencies.iter().max().copied().unwrap_or_default();
    println!(
        "cancel to tree gone: p50 {} p99 {} worst {} ({count} cancels; goal at worst {}{})",
        ms(percentile(&mut latencies, 50)),
        ms(percentile(&mut latencies, 99)),
        ms(worst),
        ms(CANCEL_GOAL),
        missed(worst > CANCEL_GOAL)
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
        let mut server = started(bench_server()).await;
        let tag = common::unique("bench-guardian");
        let agents = mcp::agents();
        for n in 0..RUNS {
            let agent = agents[n % agents.len()];
            let prompt = format!("{CONTAINED} tag={tag}");
            server
                .start_call(agent, json!({"prompt": prompt}), None)
                .await;
        }
        let server_pid = server.pid();
        common::wait_until("every process of the runs is up", || {
            common::run_processes_of(server_pid).len() >= RUNS * PROCESSES_PER_RUN
        })
        .await;
        let pids = common::run_processes_of(server_pid);
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
        let mut guardian = std::process::Command::new(common::binary())
            .args(["__guardian", "CAM_RUN_ID=1.0-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start a guardian");
        spawns.push(started.elapsed());
        drop(guardian.stdin.take());
        guardian.wait().expect("the guardian exits on EOF");
    }
    let server = started(bench_server()).await;
    // Started before the server's runtime; the bench's client may be quicker to see it.
    common::wait_until("the server's guardian is up", || {
        common::guardian_of(server.pid()).is_some()
    })
    .await;
    let guardian = common::guardian_of(server.pid()).expect("the server's guardian");
    // Where a process sleeps in the kernel is shown on Linux only.
    #[cfg(target_os = "linux")]
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

fn quick_cli() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quick-cli/codex")
}

/// A server whose codex is the sh stand-in.
async fn quick_server() -> Server {
    server_with_codex(&quick_cli()).await
}

async fn server_with_codex(codex: &std::path::Path) -> Server {
    let mut server = bench_server()
        .env("CAM_CODEX_BIN", codex)
        .env("CAM_LOG", "warn")
        .spawn();
    server.initialize().await;
    server
}

/// The calls of the fast stream measured together: the CPU clock of /proc moves in 10 ms
/// ticks, a tenth of one call's CPU time.
const STREAM_CALLS: usize = 10;
/// The pace of the busy stand-in, in events per second: above any real CLI, whose events
/// follow a model's output (tens to a few hundred tokens a second).
const PACE: u32 = 10_000;

/// A codex stand-in that writes FILE (`stream=FILE` in its prompt, as quick-cli takes it) at
/// `PACE` lines a second, one write per line, as a CLI flushes each event.
const PACED_CLI: &str = r#"#!/usr/bin/env python3
import sys, time
path = sys.stdin.readline().split("stream=", 1)[1].split()[0]
out = sys.stdout.buffer
start = time.monotonic()
with open(path, "rb") as lines:
    for n, line in enumerate(lines):
        late = start + n / PACE - time.monotonic()
        if late > 0:
            time.sleep(late)
        out.write(line)
        out.flush()
"#;

/// `cli` started with `prompt` on its stdin (then closed) and its stdout to `stdout`.
fn start_stand_in(
    cli: &std::path::Path,
    prompt: &str,
    stdout: impl Into<std::process::Stdio>,
) -> std::process::Child {
    use std::io::Write;
    let mut child = std::process::Command::new(cli)
        .stdin(std::process::Stdio::piped())
        .stdout(stdout)
        .spawn()
        .expect("start the stand-in");
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin
        .write_all(prompt.as_bytes())
        .expect("write the prompt");
    child
}

/// `cli` writing `prompt`'s stream to /dev/null, as it would to the server.
fn stand_in_to_dev_null(cli: &std::path::Path, prompt: &str) -> Duration {
    let started = Instant::now();
    let mut child = start_stand_in(cli, prompt, std::process::Stdio::null());
    assert!(child.wait().expect("wait for the stand-in").success());
    started.elapsed()
}

/// The floor under the burst's wall goal: `cli` writing `prompt`'s stream into a pipe of the
/// size the server gives a CLI (1 MiB), whose reader does nothing but drain it in batches a
/// millisecond apart, as the server's reader does while reads come often. No reader that
/// batches can beat it; what the server's wall adds above it is the server's own.
#[cfg(target_os = "linux")]
fn stand_in_to_a_draining_reader(cli: &std::path::Path, prompt: &str) -> Duration {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use std::io::{ErrorKind, Read};
    let (read_end, write_end) = nix::unistd::pipe().expect("make a pipe");
    fcntl(&write_end, FcntlArg::F_SETPIPE_SZ(1 << 20)).expect("grow the pipe to 1 MiB");
    fcntl(&read_end, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).expect("a non-blocking read end");
    let started = Instant::now();
    let mut child = start_stand_in(cli, prompt, write_end);
    let (mut reader, mut buffer) = (std::fs::File::from(read_end), vec![0u8; 1 << 20]);
    'drain: loop {
        std::thread::sleep(Duration::from_millis(1));
        loop {
            match reader.read(&mut buffer) {
                Ok(0) => break 'drain,
                Ok(_) => {}
                Err(error) if error.kind() == ErrorKind::WouldBlock => break,
                Err(error) => panic!("read the stand-in's stream: {error}"),
            }
        }
    }
    assert!(child.wait().expect("wait for the stand-in").success());
    started.elapsed()
}

/// What calls of `prompt` cost a server.
#[derive(Default)]
struct StreamCost {
    /// CPU seconds, summed over the calls.
    cpu: f64,
    walls: Vec<Duration>,
    /// The server's peak RSS after the first call, and after the last, in KiB (Linux only).
    first_peak_kib: Option<u64>,
    last_peak_kib: Option<u64>,
}

impl StreamCost {
    /// CPU seconds per call, their mean.
    fn cpu_per_call(&self) -> f64 {
        self.cpu / self.walls.len().max(1) as f64
    }
}

/// One call of `prompt` on `server`, added to `cost`.
async fn stream_call(server: &mut Server, prompt: &str, cost: &mut StreamCost) {
    let before = cpu_seconds(server.pid());
    let started = Instant::now();
    let token = format!("stream-{}", cost.walls.len());
    let id = server
        .start_call("codex", json!({"prompt": prompt}), Some(&token))
        .await;
    let result = server.result(id).await;
    cost.walls.push(started.elapsed());
    cost.cpu += cpu_seconds(server.pid()) - before;
    assert_eq!(
        result["structuredContent"]["answer"], "long-run-done",
        "{result}"
    );
    cost.last_peak_kib = ProcStatus::read(server.pid()).peak_rss_kib;
    if cost.walls.len() == 1 {
        cost.first_peak_kib = cost.last_peak_kib;
    }
}

/// The goals of the stream section, with the job store: the burst's wall time against the
/// stand-in's alone, the server's peak RSS in MiB, and the share of one core the server takes
/// to record a busy CLI.
const BURST_WALL_GOAL: f64 = 1.5;
const STREAM_PEAK_RSS_GOAL_MIB: f64 = 32.0;
const BUSY_CPU_GOAL_PERCENT: f64 = 5.0;

/// The stream the stream section's calls ask for, written to a file the stand-ins read.
struct StreamFile {
    dir: TempDir,
    prompt: String,
    events: usize,
    mb: f64,
}

impl StreamFile {
    fn write(events: usize) -> Self {
        let dir = common::temp_dir("bench-stream");
        let path = dir.path().join("long-run.jsonl");
        let stream = long_run::long_codex_stream(events);
        std::fs::write(&path, &stream).expect("write the stream");
        Self {
            prompt: format!("stream={}\n", path.display()),
            dir,
            events,
            mb: stream.len() as f64 / 1e6,
        }
    }

    /// A server's CPU seconds per call, as MB per CPU-second and ns per event.
    fn per_cpu_second(&self, cpu: f64) -> String {
        format!(
            "{:.0} MB per server CPU-second ({cpu:.3} s, {:.0} ns per event)",
            self.mb / cpu.max(1e-3),
            cpu * 1e9 / self.events as f64
        )
    }
}

async fn report_stream_throughput(events: usize, paced_events: usize) {
    let stream = StreamFile::write(events);
    let (cost, alone) = report_fast_stream(&stream).await;
    let ratio = percentile(&mut cost.walls.clone(), 50).as_secs_f64() / alone.as_secs_f64();
    let peak = cost.last_peak_kib.map(|kib| kib as f64 / 1024.0);
    println!(
        "   goals, with the store: wall {ratio:.2}x the stand-in's alone (at most \
         {BURST_WALL_GOAL}x{}), peak RSS {} MiB (at most {STREAM_PEAK_RSS_GOAL_MIB:.0}{})",
        missed(ratio > BURST_WALL_GOAL),
        mib(cost.last_peak_kib),
        missed(peak.is_some_and(|peak| peak > STREAM_PEAK_RSS_GOAL_MIB))
    );
    report_paced_stream(&StreamFile::write(paced_events)).await;
}

/// The stream as fast as the kernel takes it, on a server with a job store and on one without,
/// taking turns; what it cost the server with the store.
async fn report_fast_stream(stream: &StreamFile) -> (StreamCost, Duration) {
    // The same calls on a server whose job store is unusable, so it records nothing: what the
    // store adds (it serializes every event of the 22.5 MB and writes the head and the newest
    // tail of its 2 MiB cap per job). The two take turns, call by call, so that a machine
    // whose speed drifts (a shared VM's does, by a quarter) slows both alike.
    let mut server = quick_server().await;
    let mut bare = bench_server()
        .env("CAM_CODEX_BIN", quick_cli())
        .env("CAM_LOG", "error")
        .env(
            "CAM_STATE_DIR",
            stream.dir.path().join("long-run.jsonl/no-store"),
        )
        .spawn();
    bare.initialize().await;
    let (mut cost, mut without) = (StreamCost::default(), StreamCost::default());
    let mut alone = Vec::with_capacity(STREAM_CALLS);
    let mut floor = Vec::with_capacity(STREAM_CALLS);
    for _ in 0..STREAM_CALLS {
        alone.push(stand_in_to_dev_null(&quick_cli(), &stream.prompt));
        #[cfg(target_os = "linux")]
        floor.push(stand_in_to_a_draining_reader(&quick_cli(), &stream.prompt));
        stream_call(&mut server, &stream.prompt, &mut cost).await;
        stream_call(&mut bare, &stream.prompt, &mut without).await;
    }
    let alone = percentile(&mut alone, 50);
    print_fast_stream(stream, &mut cost, &mut without, alone);
    if !floor.is_empty() {
        let floor = percentile(&mut floor, 50);
        println!(
            "   the floor, the stand-in into a 1 MiB pipe drained in batches a millisecond apart \
             by a reader that does nothing else: wall p50 {} ({:.2}x)",
            ms(floor),
            floor.as_secs_f64() / alone.as_secs_f64()
        );
    }
    (cost, alone)
}

/// The fast stream's figures, with the store and without.
fn print_fast_stream(
    stream: &StreamFile,
    cost: &mut StreamCost,
    without: &mut StreamCost,
    alone: Duration,
) {
    let wall = percentile(&mut cost.walls, 50);
    let bare_wall = percentile(&mut without.walls, 50);
    println!(
        "stream of {} events ({:.1} MB) as fast as the kernel takes them (awk, one write per \
         line), {STREAM_CALLS} calls: {}; wall p50 {} vs {} for the stand-in alone ({:.2}x); \
         peak RSS {} MiB after the first call, {} after the last",
        stream.events,
        stream.mb,
        stream.per_cpu_second(cost.cpu_per_call()),
        ms(wall),
        ms(alone),
        wall.as_secs_f64() / alone.as_secs_f64(),
        mib(cost.first_peak_kib),
        mib(cost.last_peak_kib)
    );
    println!(
        "   without the job store: {}; wall p50 {} ({:.2}x); peak RSS {} MiB; the store adds \
         {:+.0} % server CPU, {} MiB peak RSS",
        stream.per_cpu_second(without.cpu_per_call()),
        ms(bare_wall),
        bare_wall.as_secs_f64() / alone.as_secs_f64(),
        mib(without.last_peak_kib),
        (cost.cpu / without.cpu.max(1e-3) - 1.0) * 100.0,
        cost.last_peak_kib
            .zip(without.last_peak_kib)
            .map_or("n/a".into(), |(with, bare)| format!(
                "{:+.1}",
                (with as f64 - bare as f64) / 1024.0
            ))
    );
}

/// A busy CLI: the stream at [`PACE`] events a second, recorded by the store. The share of one
/// core the server takes, and whether it keeps up with its writer.
async fn report_paced_stream(stream: &StreamFile) {
    let paced = stream.dir.path().join("paced-codex");
    std::fs::write(&paced, PACED_CLI.replace("PACE", &PACE.to_string()))
        .expect("write the paced stand-in");
    std::fs::set_permissions(&paced, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("make the paced stand-in executable");
    let alone = stand_in_to_dev_null(&paced, &stream.prompt);
    let mut server = server_with_codex(&paced).await;
    let mut cost = StreamCost::default();
    stream_call(&mut server, &stream.prompt, &mut cost).await;
    let share = 100.0 * cost.cpu / cost.walls[0].as_secs_f64();
    println!(
        "a busy CLI: {} events at {PACE} a second (python3, one write per line): the server \
         takes {share:.1}% of one core (goal under {BUSY_CPU_GOAL_PERCENT}%{}); wall {} vs {} \
         for the stand-in alone ({:.3}x); peak RSS {} MiB",
        stream.events,
        missed(share >= BUSY_CPU_GOAL_PERCENT),
        ms(cost.walls[0]),
        ms(alone),
        cost.walls[0].as_secs_f64() / alone.as_secs_f64(),
        mib(cost.last_peak_kib)
    );
}

async fn report_start_cancel_stress(cycles: usize) {
    let mut server = quick_server().await;
    let pid = server.pid();
    let mut rss = vec![ProcStatus::read(pid).rss_kib];
    let fds_before = or_na(open_fds(pid));
    for n in 0..cycles {
        let id = server
            .start_call(
                "codex",
                json!({"prompt": "children=1 sleep=60"}),
                Some("stress"),
            )
            .await;
        // Cancel once the run is under way: its session event came as a progress report.
        let reports = server.progress("stress").len();
        server
            .wait_for("the run's first progress report", |messages| {
                let count = messages
                    .iter()
                    .filter(|m| m["params"]["progressToken"] == "stress")
                    .count();
                (count > reports).then_some(())
            })
            .await;
        server.cancel(id, "stress").await;
        server.ping().await;
        if n + 1 == cycles / 2 {
            rss.push(ProcStatus::read(pid).rss_kib);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while (!common::run_processes_of(pid).is_empty() || zombies_of(pid) > 0)
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    rss.push(ProcStatus::read(pid).rss_kib);
    let rss: Vec<String> = rss.into_iter().map(mib).collect();
    println!(
        "{cycles} start/cancel cycles: {} processes of runs left, open fds {fds_before} -> {}, \
         {} zombies, RSS start/middle/end {} MiB",
        common::run_processes_of(pid).len(),
        or_na(open_fds(pid)),
        zombies_of(pid),
        rss.join(" / ")
    );
}

/// Zombie children of `pid`: processes it never reaped (listed as its children, yet dead).
fn zombies_of(pid: i32) -> usize {
    let children = platform::children(u32::try_from(pid).expect("a pid"));
    children
        .into_iter()
        .filter(|&child| !platform::is_alive(child))
        .count()
}

/// Another process's descriptors are listed in /proc, on Linux only.
#[cfg(target_os = "linux")]
fn open_fds(pid: i32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |dir| dir.count()))
}

#[cfg(not(target_os = "linux"))]
fn open_fds(_: i32) -> Option<usize> {
    None
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
    u32::try_from(pid).is_ok_and(platform::is_alive)
}

/// A process's memory, in KiB.
struct ProcStatus {
    rss_kib: u64,
    /// The peak RSS so far (Linux only).
    peak_rss_kib: Option<u64>,
    /// The private part of the RSS; the rest is file pages (the binary), shared with others
    /// (Linux only).
    anon_kib: Option<u64>,
}

impl ProcStatus {
    fn read(pid: i32) -> Self {
        let pid = u32::try_from(pid).expect("a pid");
        Self {
            rss_kib: platform::resident_bytes(pid).map_or(0, |bytes| bytes / 1024),
            peak_rss_kib: status_kib(pid, "VmHWM:"),
            anon_kib: status_kib(pid, "RssAnon:"),
        }
    }
}

/// A figure of /proc/PID/status, in KiB.
#[cfg(target_os = "linux")]
fn status_kib(pid: u32, name: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|line| line.strip_prefix(name))?;
    line.split_whitespace().next()?.parse().ok()
}

/// macOS keeps neither the peak nor the private RSS of another process.
#[cfg(not(target_os = "linux"))]
fn status_kib(_: u32, _: &str) -> Option<u64> {
    None
}

/// User plus system CPU time of `pid`, in seconds.
fn cpu_seconds(pid: i32) -> f64 {
    let pid = u32::try_from(pid).expect("a pid");
    platform::cpu_time_of(pid)
        .expect("the server's CPU time")
        .as_secs_f64()
}

async fn report_job_store(count: usize) {
    let state = common::temp_dir("bench-jobs");
    let mut server = store_server(state.path()).await;
    let started = Instant::now();
    record_background_jobs(&mut server, count).await;
    let elapsed = started.elapsed();
    let bytes = dir_bytes(state.path());
    let mut latencies = Vec::with_capacity(50);
    for _ in 0..50 {
        let asked = Instant::now();
        let listed = server.call("job_list", json!({"limit": 50})).await;
        latencies.push(asked.elapsed());
        assert!(listed["isError"] != true, "{listed}");
    }
    println!("\n8. job store: {count} background jobs of the stand-in, cap 8");
    println!(
        "   {:.0} jobs/s recorded start to end ({:.1} s), {:.0} bytes per job on disk",
        count as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64(),
        bytes as f64 / count as f64
    );
    println!(
        "   job_list (50 newest of {count}): p50 {}, p95 {}",
        ms(percentile(&mut latencies, 50)),
        ms(percentile(&mut latencies, 95))
    );
}

/// A server whose codex is the sh stand-in, with its job store in `dir`.
async fn store_server(dir: &std::path::Path) -> Server {
    started(
        bench_server()
            .env("CAM_CODEX_BIN", quick_cli())
            .env("CAM_LOG", "warn")
            .env("CAM_STATE_DIR", dir),
    )
    .await
}

/// `count` background jobs of the stand-in (each with its events and answer) on `server`,
/// run to their end.
async fn record_background_jobs(server: &mut Server, count: usize) {
    let mut calls = Vec::with_capacity(count);
    for n in 0..count {
        let arguments = json!({"prompt": format!("answer=job-{n}"), "background": true});
        calls.push(server.start_call("codex", arguments, None).await);
    }
    let mut ids = Vec::with_capacity(count);
    for call in calls {
        let result = server.result(call).await;
        ids.push(result["structuredContent"]["job_id"].clone());
    }
    for batch in ids.chunks(100) {
        loop {
            let waited = server
                .call("job_wait", json!({"job_ids": batch, "timeout_secs": 60}))
                .await;
            if waited["structuredContent"]["unfinished"] == 0 {
                break;
            }
        }
    }
}

/// A codex stand-in that edits a file of its workspace, so every run changes something (an
/// isolated run keeps its worktree), then answers as quick-cli does.
const EDITING_CLI: &str = "#!/bin/sh\necho \"$$\" > bench-edit.txt\nexec 'QUICK_CLI'\n";

/// The isolation section's timings, one per run each.
#[derive(Default)]
struct IsolationTimes {
    status: Vec<Duration>,
    anchor: Vec<Duration>,
    parallel_anchor: Vec<Duration>,
    outside_git: Vec<Duration>,
    in_place: Vec<Duration>,
    isolated: Vec<Duration>,
}

async fn report_isolation(files: usize, runs: usize) {
    let started = Instant::now();
    let repo = SyntheticRepo::make("cli-agent-mcp-bench-isolation", files, 4096);
    let made = started.elapsed();
    let outside_git = repo.root().join("outside-git");
    std::fs::create_dir_all(&outside_git).expect("create a directory outside git");
    let mut server = isolation_server(&repo).await;
    let mut times = IsolationTimes::default();
    for n in 0..runs {
        times
            .status
            .push(timed(|| repo.git(&["status", "--porcelain"])));
        let plain = repo.status_and_worktree_add(&format!("anchor-{n}"), Checkout::Serial);
        times.anchor.push(plain);
        let parallel = repo.status_and_worktree_add(&format!("workers-{n}"), Checkout::Parallel);
        times.parallel_anchor.push(parallel);
        let (took, ..) = timed_run(&mut server, &outside_git, "none").await;
        times.outside_git.push(took);
        let (took, _, in_place) = timed_run(&mut server, repo.dir(), "none").await;
        times.in_place.push(took);
        assert_eq!(in_place["tree"]["files_changed"], 1, "{in_place}");
        let (took, job, isolated) = timed_run(&mut server, repo.dir(), "worktree").await;
        times.isolated.push(took);
        assert_eq!(isolated["tree"]["state"], "kept", "{isolated}");
        let discarded = server.call("job_discard", json!({"job_id": job})).await;
        assert!(!mcp::is_error(&discarded), "{discarded}");
    }
    print_isolation(files, made, times);
}

/// A server whose codex is the editing stand-in, whose git reads no config of the real home,
/// with its state (and so its worktrees) next to the repository.
async fn isolation_server(repo: &SyntheticRepo) -> Server {
    let codex = repo.root().join("editing-codex");
    let script = EDITING_CLI.replace("QUICK_CLI", &quick_cli().display().to_string());
    std::fs::write(&codex, script).expect("write the editing stand-in");
    std::fs::set_permissions(&codex, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("make the editing stand-in executable");
    let builder = repo
        .git_env()
        .into_iter()
        .fold(bench_server(), |builder, (key, value)| {
            builder.env(key, value)
        });
    let mut server = builder
        .env("CAM_CODEX_BIN", &codex)
        .env("CAM_LOG", "warn")
        .env("CAM_STATE_DIR", repo.root().join("state"))
        .spawn();
    server.initialize().await;
    server
}

/// One `workspace-write` run of the stand-in in `workspace`, timed after a `sync` from the
/// call to the `job_wait` answer that sees it end (as a background job: on a large repository
/// a run can outlast a foreground call's hand-off); its job id and `job_result`.
async fn timed_run(
    server: &mut Server,
    workspace: &std::path::Path,
    isolation: &str,
) -> (Duration, serde_json::Value, serde_json::Value) {
    let arguments = json!({
        "prompt": "answer=edited",
        "workspace": workspace,
        "permission": "workspace-write",
        "isolation": isolation,
        "background": true,
    });
    synthetic_repo::sync();
    let started = Instant::now();
    let call = server.call("codex", arguments).await;
    assert!(!mcp::is_error(&call), "{}", mcp::all_text(&call));
    let job = call["structuredContent"]["job_id"].clone();
    loop {
        let wait = json!({"job_ids": [&job], "timeout_secs": 30});
        let waited = server.call("job_wait", wait).await;
        if waited["structuredContent"]["unfinished"] == 0 {
            break;
        }
    }
    let took = started.elapsed();
    let page = server.call("job_result", json!({"job_id": job})).await;
    assert!(!mcp::is_error(&page), "{}", mcp::all_text(&page));
    (took, job, page["structuredContent"].clone())
}

fn print_isolation(files: usize, made: Duration, times: IsolationTimes) {
    let runs = times.status.len();
    let status = median(times.status);
    let anchor = median(times.anchor);
    let outside = median(times.outside_git);
    let in_place = median(times.in_place);
    let isolated = median(times.isolated);
    println!(
        "\n9. isolation through the server: {files} files of 4096 bytes (made in {:.1} s), \
         median of {runs}",
        made.as_secs_f64()
    );
    println!("   {:<50} {:>12}   {:>5}", "", "", "ratio");
    isolation_row("git status --porcelain (anchor a)", status, None);
    isolation_row("git status + git worktree add (anchor b)", anchor, None);
    let parallel = median(times.parallel_anchor);
    isolation_row(
        "  the same, checkout.workers=0 (reference)",
        parallel,
        Some(anchor),
    );
    isolation_row("call, none, outside git", outside, None);
    isolation_row("call, none, in the repository", in_place, None);
    let tracking = in_place.saturating_sub(outside);
    // A run in place scans its tree twice, just before and just after: two `git status`.
    isolation_row(
        "  snapshots + changes per run (x 2a, goal 1.5)",
        tracking,
        Some(status * 2),
    );
    isolation_row("call, worktree, in the repository", isolated, None);
    let set_up = isolated.saturating_sub(outside);
    isolation_row(
        "  isolated set-up + settling (x b, goal 1.2)",
        set_up,
        Some(anchor),
    );
}

fn isolation_row(name: &str, took: Duration, anchor: Option<Duration>) {
    let ratio = anchor.map_or(String::new(), |anchor| {
        format!("{:.2}", took.as_secs_f64() / anchor.as_secs_f64())
    });
    println!("   {name:<50} {:>12}   {ratio:>5}", ms(took));
}

fn percentile(samples: &mut [Duration], pct: usize) -> Duration {
    samples.sort();
    let rank = (samples.len() * pct).div_ceil(100).max(1) - 1;
    samples[rank.min(samples.len() - 1)]
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

/// A count; "n/a" for one the OS does not keep.
fn or_na(count: Option<usize>) -> String {
    count.map_or("n/a".into(), |count| count.to_string())
}

/// KiB as MiB; "n/a" for a figure the OS does not keep.
fn mib(kib: impl Into<Option<u64>>) -> String {
    kib.into()
        .map_or("n/a".into(), |kib| format!("{:.1}", kib as f64 / 1024.0))
}

/// A server for these figures, unconfined: the fake CLI writes its pid files outside the
/// workspace, and the sandbox's own cost is measured by the engine bench (section 5).
fn bench_server() -> mcp::Builder {
    Server::builder().env("CAM_SANDBOX", "off")
}

/// The bare binary, as the hosts' lines start it (`npx -y cli-agent-mcp`), for the cold start.
fn host_started() -> mcp::Builder {
    Server::bare().env("CAM_SANDBOX", "off")
}

async fn started(builder: mcp::Builder) -> Server {
    let mut server = builder.spawn();
    server.initialize().await;
    server
}
