//! The engine bench on Linux and macOS (see `engine.rs`).

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cli_agent_engine::command_line::CommandLine;
use cli_agent_engine::sandbox::{Confinement, KernelSupport, SandboxMode, WritePlan};
use cli_agent_engine::{
    Agent, AgentEvent, Engine, EngineConfig, Permission, RunRequest, Status, clis,
};
use cli_agent_engine::{platform, process};
use cli_agent_test_support::long_run;
#[cfg(target_os = "linux")]
use nix::sys::wait::{Id, WaitPidFlag, waitid};
#[cfg(target_os = "linux")]
use nix::unistd::Pid;
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

const STREAM_BYTES: usize = 64 * 1024 * 1024;
const BIG_MESSAGE_BYTES: usize = 1024 * 1024;
const PARSE_PASSES: usize = 3;
const RUNS: usize = 20;
/// The captures repeated for the realistic mix.
const MIX: [&str; 3] = ["plain", "tool_call", "reasoning"];
/// One line of answer text, JSON-escaped, repeated to fill a big agent message.
const FILLER: &str =
    r#"Here is the change to \"src/lib.rs\":\n\tfn main() { println!(\"hi\"); }\n"#;

pub(crate) fn main() {
    cli_agent_engine::process::adopt_orphans().expect("become a child subreaper");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("cli-agent-engine benchmarks ({cores} cores)");

    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let wanted = |section: &str| only.is_empty() || only.iter().any(|name| name == section);

    if wanted("parse") {
        report_parse_throughput(&fixtures.join("captures"));
    }
    // The runs' directory under the system's temp dir, removed on drop.
    let workspace = tempfile::Builder::new()
        .prefix("cam-bench-")
        .tempdir()
        .expect("create the bench workspace");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("build the tokio runtime");
    let bin = fixtures.join("bin");
    let engine = Engine::new(fake_cli_config(&bin));
    if wanted("spawn") {
        report_spawn_to_first_event(&runtime, &engine, &bin, workspace.path());
    }
    if wanted("exit") {
        report_exit_to_outcome(&runtime, &engine, workspace.path());
    }
    if wanted("long") {
        let through_engine = EngineStream::measure(&runtime, workspace.path());
        report_long_run_stages();
        through_engine.print();
    }
    if wanted("sandbox") {
        report_sandbox(&runtime, &bin, workspace.path());
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Event parsing

struct ParseCase {
    agent: Agent,
    label: String,
    stream: String,
}

fn report_parse_throughput(captures: &Path) {
    println!();
    println!(
        "1. Event parsing: Cli::dialect + parse_line over a stream in memory, best of {PARSE_PASSES} passes"
    );
    println!(
        "   {:<9} {:<30} {:>10} {:>12} {:>12} {:>12}",
        "dialect", "stream", "size", "bytes", "per line", "per event"
    );
    for agent in clis::builtin_agents() {
        for case in [
            mixed_stream(agent, captures),
            big_message_stream(agent, captures),
        ] {
            let pass = best_parse_pass(&case);
            let seconds = pass.elapsed.as_secs_f64();
            let bytes = case.stream.len();
            println!(
                "   {:<9} {:<30} {:>6.1} MiB {:>7.0} MB/s {:>12} {:>12}",
                case.agent.name(),
                case.label,
                bytes as f64 / (1024.0 * 1024.0),
                bytes as f64 / seconds / 1e6,
                per(pass.elapsed, pass.lines),
                per(pass.elapsed, pass.events),
            );
        }
    }
    println!("   (MB = 10^6 bytes)");
}

/// `elapsed` shared by `count` things: nanoseconds each, or microseconds where that is long.
fn per(elapsed: Duration, count: usize) -> String {
    let nanos = elapsed.as_secs_f64() * 1e9 / count.max(1) as f64;
    match nanos {
        n if n >= 1e4 => format!("{:.0} us", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

/// The dialect's plain, tool and reasoning captures, one after the other, repeated.
fn mixed_stream(agent: Agent, captures: &Path) -> ParseCase {
    let dir = captures.join(agent.name());
    let unit: String = MIX.iter().map(|name| sample(&dir, name)).collect();
    ParseCase {
        agent,
        label: MIX.join("+"),
        stream: repeat_to(&unit, STREAM_BYTES),
    }
}

/// The plain capture with its answer text grown to 1 MiB (claude carries it twice), repeated.
fn big_message_stream(agent: Agent, captures: &Path) -> ParseCase {
    let plain = sample(&captures.join(agent.name()), "plain");
    let answer = "hello from fake model";
    assert!(
        plain.contains(answer),
        "{agent}'s plain sample lost its answer"
    );
    let message = repeat_to(FILLER, BIG_MESSAGE_BYTES);
    ParseCase {
        agent,
        label: "plain, 1 MiB agent message".to_owned(),
        stream: repeat_to(&plain.replace(answer, &message), STREAM_BYTES),
    }
}

fn sample(dir: &Path, name: &str) -> String {
    let path = dir.join(format!("{name}.jsonl"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
    if text.ends_with('\n') {
        text
    } else {
        text + "\n"
    }
}

/// `unit` repeated until the result is at least `bytes` long.
fn repeat_to(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes.div_ceil(unit.len()))
}

/// One pass of a dialect over a stream: how long it took, and the lines and events it read.
struct ParsePass {
    elapsed: Duration,
    lines: usize,
    events: usize,
}

/// The fastest of the passes.
fn best_parse_pass(case: &ParseCase) -> ParsePass {
    (0..PARSE_PASSES)
        .map(|_| parse_pass(case))
        .min_by_key(|pass| pass.elapsed)
        .expect("at least one pass")
}

fn parse_pass(case: &ParseCase) -> ParsePass {
    let mut parser = case.agent.cli().dialect();
    let mut events = Vec::new();
    let (mut count, mut lines, mut issues) = (0, 0, 0);
    let started = Instant::now();
    for line in case.stream.split_terminator('\n') {
        if black_box(parser.parse_line(black_box(line), &mut events)).is_err() {
            issues += 1;
        }
        lines += 1;
        count += black_box(&mut events).len();
        events.clear();
    }
    let elapsed = started.elapsed();
    assert_eq!(issues, 0, "{} {}: lines not parsed", case.agent, case.label);
    ParsePass {
        elapsed,
        lines,
        events: count,
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Per event on a long run

const LONG_RUN_EVENTS: usize = 200_000;

fn report_long_run_stages() {
    let stream = long_run::long_codex_stream(LONG_RUN_EVENTS);
    let mut events = Vec::with_capacity(LONG_RUN_EVENTS);
    parse_stream(&stream, |event| events.push(event));
    let parse = best_of(|| parse_stream(&stream, drop));
    let mut line = String::new();
    let describe = best_of(|| {
        let started = CpuTime::now();
        for event in &events {
            black_box(event.describe_into(&mut line));
        }
        started.elapsed()
    });
    let mut record = Vec::with_capacity(1 << 20);
    let serialize = best_of(|| {
        let started = CpuTime::now();
        for event in &events {
            record.clear();
            serde_json::to_writer(&mut record, event).expect("an event serializes");
            record.push(b'\n');
            black_box(&record);
        }
        started.elapsed()
    });
    println!();
    println!(
        "4. Per event on the server bench's long codex run ({} events, {:.1} MB): CPU time, best of {PARSE_PASSES}",
        events.len(),
        stream.len() as f64 / 1e6
    );
    for (stage, elapsed) in [
        ("split and parse (from_utf8 + parse_line)", parse),
        ("describe_into (the progress line)", describe),
        ("serde_json::to_writer into a reused Vec", serialize),
    ] {
        println!(
            "   {stage:<44} {:>6.0} ns/event",
            elapsed.as_secs_f64() * 1e9 / events.len() as f64
        );
    }
}

/// Every line of a codex `stream` parsed as the supervisor does it, each event handed to
/// `take`; how long that took.
fn parse_stream(stream: &str, mut take: impl FnMut(AgentEvent)) -> Duration {
    let mut parser = clis::CODEX.cli().dialect();
    let mut events = Vec::new();
    let started = CpuTime::now();
    for line in stream.split_terminator('\n') {
        let text = std::str::from_utf8(black_box(line.as_bytes())).expect("UTF-8");
        let _ = parser.parse_line(text, &mut events);
        events.drain(..).for_each(&mut take);
    }
    started.elapsed()
}

/// The long run through `Engine::run`, the stand-in writing it as a CLI would.
struct EngineStream {
    mb: f64,
    events: usize,
    /// The least CPU time of this process (every thread) one run took.
    cpu: Duration,
    /// The highest peak RSS of a run, in KiB (Linux only).
    peak_kib: Option<u64>,
}

/// The server's goals, which the engine alone must meet with room to spare: a busy CLI (this
/// many events a second) costs under this share of a core, and a 20 MB burst (the long run
/// is about that) peaks at most at this RSS.
const BUSY_EVENTS_PER_SECOND: f64 = 10_000.0;
const BUSY_CORE_SHARE_GOAL: f64 = 0.05;
const STREAM_PEAK_RSS_GOAL_MIB: f64 = 32.0;

impl EngineStream {
    fn measure(runtime: &Runtime, workspace: &Path) -> Self {
        let path = workspace.join("long-run.jsonl");
        let stream = long_run::long_codex_stream(LONG_RUN_EVENTS);
        std::fs::write(&path, &stream).expect("write the stream");
        let mb = stream.len() as f64 / 1e6;
        drop(stream);
        let quick = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/quick-cli");
        let engine = Engine::new(fake_cli_config(&quick));
        let prompt = format!("stream={}", path.display());
        let (mut cpu, mut peak_kib) = (Duration::MAX, None);
        let mut ignore = |_: &[AgentEvent]| {};
        for _ in 0..PARSE_PASSES {
            reset_peak_rss();
            let started = process_cpu();
            let request = RunRequest::new(prompt.clone(), workspace);
            let run = engine.run(clis::CODEX, request, CancellationToken::new(), &mut ignore);
            let outcome = runtime.block_on(run).expect("start the stand-in");
            cpu = cpu.min(process_cpu() - started);
            assert_eq!(outcome.answer, "long-run-done", "{outcome:?}");
            peak_kib = peak_kib.max(peak_rss_kib());
        }
        Self {
            mb,
            events: LONG_RUN_EVENTS,
            cpu,
            peak_kib,
        }
    }

    fn print(&self) {
        let rate = self.mb / self.cpu.as_secs_f64().max(1e-6);
        let per_event = self.cpu.as_secs_f64() / self.events as f64;
        let share = per_event * BUSY_EVENTS_PER_SECOND;
        let peak = self.peak_kib.map(|kib| kib as f64 / 1024.0);
        let over = peak.is_some_and(|peak| peak > STREAM_PEAK_RSS_GOAL_MIB);
        println!(
            "   Engine::run of the stand-in writing it (awk), best of {PARSE_PASSES}: {rate:.0} MB \
             per CPU-second of this process, {:.0} ns an event: {:.2}% of a core at \
             {BUSY_EVENTS_PER_SECOND:.0} events a second (goal under {:.0}%{}), peak RSS {} MiB \
             (goal at most {STREAM_PEAK_RSS_GOAL_MIB:.0}{})",
            per_event * 1e9,
            share * 100.0,
            BUSY_CORE_SHARE_GOAL * 100.0,
            missed(share >= BUSY_CORE_SHARE_GOAL),
            peak.map_or("n/a".into(), |peak| format!("{peak:.1}")),
            missed(over)
        );
    }
}

/// Marks a figure that misses its goal, so that a drop shows.
fn missed(missed: bool) -> &'static str {
    if missed { ", MISSED" } else { "" }
}

/// Starts this process's peak RSS afresh from its current RSS (Linux; elsewhere nothing).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// This process's peak RSS in KiB, on Linux.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?;
    line.split_whitespace().next()?.parse().ok()
}

/// The CPU time of this process, every thread of it.
fn process_cpu() -> Duration {
    cpu_clock(nix::libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// This thread's CPU time: what a stage costs, whatever else the machine runs meanwhile.
struct CpuTime(Duration);

impl CpuTime {
    fn now() -> Self {
        Self(thread_cpu())
    }

    fn elapsed(&self) -> Duration {
        Self::now().0 - self.0
    }
}

fn best_of(mut pass: impl FnMut() -> Duration) -> Duration {
    (0..PARSE_PASSES)
        .map(|_| pass())
        .min()
        .expect("at least one pass")
}

// ---------------------------------------------------------------------------------------------
// 2 and 3. Runs of the fake CLI

/// When things happened in one run, measured from the call of `Engine::run` to its return.
struct RunTimes {
    first_event: Duration,
    terminal_to_return: Duration,
    /// From the CLI's exit, when it was watched for.
    exit_to_return: Option<Duration>,
    status: Status,
}

/// p50 and p95 (nearest rank) of a set of durations.
struct Percentiles {
    p50: Duration,
    p95: Duration,
}

impl Percentiles {
    fn of(mut samples: Vec<Duration>) -> Option<Self> {
        samples.sort();
        let rank = |p: usize| samples[(samples.len() * p).div_ceil(100).max(1) - 1];
        (!samples.is_empty()).then(|| Self {
            p50: rank(50),
            p95: rank(95),
        })
    }

    /// The two figures as table cells; `n/a` when there were no samples.
    fn cells(this: Option<Self>) -> String {
        match this {
            Some(p) => format!("{:>11} {:>11}", ms(p.p50), ms(p.p95)),
            None => format!("{:>11} {:>11}", "n/a", "n/a"),
        }
    }
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1e3)
}

/// The fake CLIs, unconfined: the fake writes its pid file in the workspace, which a
/// read-only run may not write (section 5 measures the sandbox on its own).
fn fake_cli_config(bin: &Path) -> EngineConfig {
    let binaries: HashMap<String, PathBuf> = clis::builtin_agents()
        .map(|agent| (agent.name().to_owned(), bin.join(agent.name())))
        .collect();
    EngineConfig {
        binaries,
        sandbox: SandboxMode::Off,
        ..EngineConfig::default()
    }
}

fn report_spawn_to_first_event(runtime: &Runtime, engine: &Engine, bin: &Path, workspace: &Path) {
    println!();
    println!(
        "2. Spawn to first event: from calling Engine::run on the fake CLI to the first event seen ({RUNS} runs)"
    );
    println!("   The fake is a Python script, so this includes the interpreter's start-up. Alone");
    println!(
        "   (`tests/fixtures/bin/codex --version` via std::process::Command, p50 of {RUNS}) it takes {}.",
        ms(bare_startup(&bin.join("codex")))
    );
    println!(
        "   {:<9} {:<26} {:>11} {:>11}",
        "dialect", "prompt", "p50", "p95"
    );
    for agent in clis::builtin_agents() {
        let runs = timed_runs(runtime, engine, agent, "say hello", workspace, false);
        let first_events = runs.iter().map(|run| run.first_event).collect();
        println!(
            "   {:<9} {:<26} {}{}",
            agent.name(),
            "say hello",
            Percentiles::cells(Percentiles::of(first_events)),
            not_completed_note(&runs)
        );
    }
}

/// p50 of the fake's `--version`: the Python interpreter's start-up and little else.
fn bare_startup(program: &Path) -> Duration {
    let samples = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let output = Command::new(program)
                .arg("--version")
                .output()
                .expect("run the fake CLI");
            assert!(output.status.success(), "the fake's --version failed");
            started.elapsed()
        })
        .collect();
    Percentiles::of(samples).expect("RUNS > 0").p50
}

fn report_exit_to_outcome(runtime: &Runtime, engine: &Engine, workspace: &Path) {
    println!();
    println!("3. CLI exit to outcome: until Engine::run returns ({RUNS} runs)");
    println!(
        "   from the terminal event the observer saw, and from the CLI's exit (seen by a thread in"
    );
    println!(
        "   waitid(WNOWAIT), which leaves the reaping to the engine; the fake writes its pid with pid-out)"
    );
    println!(
        "   {:<9} {:<26} {:>23} {:>23}",
        "", "", "terminal event -> return", "CLI exit -> return"
    );
    println!(
        "   {:<9} {:<26} {:>11} {:>11} {:>11} {:>11}",
        "dialect", "prompt", "p50", "p95", "p50", "p95"
    );
    let cases = clis::builtin_agents()
        .map(|agent| (agent, "linger=0"))
        .chain([(clis::CODEX, "children=3 session-child")]);
    for (agent, prompt) in cases {
        let runs = timed_runs(runtime, engine, agent, prompt, workspace, true);
        let from_terminal = runs.iter().map(|run| run.terminal_to_return).collect();
        let from_exit = runs.iter().filter_map(|run| run.exit_to_return).collect();
        println!(
            "   {:<9} {:<26} {} {}{}",
            agent.name(),
            prompt,
            Percentiles::cells(Percentiles::of(from_terminal)),
            Percentiles::cells(Percentiles::of(from_exit)),
            not_completed_note(&runs)
        );
    }
    println!(
        "   When the engine notices the exit before it has read the terminal line, the observer"
    );
    println!(
        "   sees that event only in the drain, after the teardown: its figure is then near zero."
    );
    println!(
        "   children=3 session-child leaves three children in the CLI's group and one in a session"
    );
    println!("   of its own, which the teardown kills and reaps.");
}

fn not_completed_note(runs: &[RunTimes]) -> String {
    let failed = runs
        .iter()
        .filter(|run| run.status != Status::Completed)
        .count();
    match failed {
        0 => String::new(),
        n => format!("   ({n} of {} runs did not complete!)", runs.len()),
    }
}

/// `RUNS` runs of `prompt`, after one run to warm up that is not counted.
fn timed_runs(
    runtime: &Runtime,
    engine: &Engine,
    agent: Agent,
    prompt: &str,
    workspace: &Path,
    watch_exit: bool,
) -> Vec<RunTimes> {
    runtime.block_on(async {
        timed_run(engine, agent, prompt, workspace, watch_exit).await;
        let mut runs = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            runs.push(timed_run(engine, agent, prompt, workspace, watch_exit).await);
        }
        runs
    })
}

async fn timed_run(
    engine: &Engine,
    agent: Agent,
    prompt: &str,
    workspace: &Path,
    watch_exit: bool,
) -> RunTimes {
    let pid_file = workspace.join("fake.pid");
    let _ = std::fs::remove_file(&pid_file);
    let (prompt, exit_watch) = if watch_exit {
        let prompt = format!("{prompt} pid-out={}", pid_file.display());
        (prompt, Some(watch_for_exit(pid_file.clone())))
    } else {
        (prompt.to_owned(), None)
    };

    let mut first_event = None;
    let mut terminal = None;
    let mut observer = |events: &[AgentEvent]| {
        let now = Instant::now();
        first_event.get_or_insert(now);
        if events.iter().any(AgentEvent::is_terminal) {
            terminal.get_or_insert(now);
        }
    };
    let request = RunRequest::new(prompt, workspace);
    let started = Instant::now();
    let outcome = engine
        .run(agent, request, CancellationToken::new(), &mut observer)
        .await
        .expect("start the fake CLI");
    let returned = Instant::now();

    let exited = exit_watch.and_then(|watch| watch.join().ok().flatten());
    RunTimes {
        first_event: first_event.expect("the fake CLI printed no event") - started,
        terminal_to_return: returned - terminal.unwrap_or(returned),
        exit_to_return: exited.map(|exited| returned.saturating_duration_since(exited)),
        status: outcome.status,
    }
}

/// A thread that waits for the fake to write its pid, then for it to exit, and returns when
/// it did. `WNOWAIT` leaves the exit status for the engine to reap; if the engine reaped it
/// first, waitid fails at once, which is still just after the exit. macOS has no `waitid` on
/// another's child that leaves it unreaped: there the exit-to-return column stays empty.
#[cfg(target_os = "linux")]
fn watch_for_exit(pid_file: PathBuf) -> std::thread::JoinHandle<Option<Instant>> {
    std::thread::spawn(move || {
        let pid = wait_for_pid(&pid_file)?;
        let _ = waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT);
        Some(Instant::now())
    })
}

#[cfg(not(target_os = "linux"))]
fn watch_for_exit(_: PathBuf) -> std::thread::JoinHandle<Option<Instant>> {
    std::thread::spawn(|| None)
}

#[cfg(target_os = "linux")]
fn wait_for_pid(pid_file: &Path) -> Option<Pid> {
    let give_up = Instant::now() + Duration::from_secs(10);
    while Instant::now() < give_up {
        if let Ok(text) = std::fs::read_to_string(pid_file) {
            return text.trim().parse().ok().map(Pid::from_raw);
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    None
}

// ---------------------------------------------------------------------------------------------
// 5. The sandbox

const SANDBOX_RUNS: usize = 200;

fn report_sandbox(runtime: &Runtime, bin: &Path, workspace: &Path) {
    println!();
    println!(
        "5. The sandbox ({}): with and without, taking turns",
        KernelSupport::current()
    );
    println!("   {:<44} {:>11} {:>11}", "", "p50", "p95");
    let plan = WritePlan {
        level: Permission::WorkspaceWrite,
        tree: workspace.to_owned(),
        state: vec![workspace.join("state")],
        ..WritePlan::default()
    };
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for n in 0..SANDBOX_RUNS {
        let (started, cpu_started) = (Instant::now(), thread_cpu());
        let confinement = Confinement::for_run(SandboxMode::Auto, &plan, &format!("bench-{n}"));
        cpu.push(thread_cpu() - cpu_started);
        wall.push(started.elapsed());
        drop(black_box(confinement));
    }
    sandbox_row("confinement built (server wall)", wall);
    sandbox_row("confinement built (server CPU)", cpu);
    let confinement = Confinement::for_run(SandboxMode::Auto, &plan, "bench-spawn")
        .expect("confine")
        .expect("this kernel has Landlock");
    let (mut plain, mut confined) = (Vec::new(), Vec::new());
    runtime.block_on(async {
        for _ in 0..SANDBOX_RUNS {
            plain.push(spawn_true(workspace, None).await);
            let ruleset = confinement.for_spawn().expect("clone the ruleset");
            confined.push(spawn_true(workspace, Some(ruleset)).await);
        }
    });
    sandbox_row("spawn to exit of /bin/true", plain);
    sandbox_row("... confined", confined);
    first_events_with_and_without(runtime, bin, workspace);
}

fn first_events_with_and_without(runtime: &Runtime, bin: &Path, workspace: &Path) {
    let engines = [SandboxMode::Off, SandboxMode::Auto].map(|sandbox| {
        Engine::new(EngineConfig {
            sandbox,
            ..fake_cli_config(bin)
        })
    });
    let mut firsts = [Vec::new(), Vec::new()];
    for _ in 0..RUNS {
        for (engine, times) in engines.iter().zip(&mut firsts) {
            let run = runtime.block_on(timed_run(
                engine,
                clis::CODEX,
                "say hello",
                workspace,
                false,
            ));
            times.push(run.first_event);
        }
    }
    let [off, auto] = firsts;
    sandbox_row("fake codex, spawn to first event", off);
    sandbox_row("... confined (read-only)", auto);
}

fn sandbox_row(label: &str, samples: Vec<Duration>) {
    println!(
        "   {label:<44} {}",
        Percentiles::cells(Percentiles::of(samples))
    );
}

async fn spawn_true(dir: &Path, ruleset: Option<platform::SpawnSandbox>) -> Duration {
    let command = CommandLine {
        program: "/bin/true".into(),
        args: Vec::new(),
        env: Vec::new(),
    };
    let started = Instant::now();
    let spawned = process::spawn(&command, dir, &process::RunMarker::new(), ruleset)
        .expect("spawn /bin/true");
    drop(spawned.stdin);
    spawned.leader.exited().await;
    let took = started.elapsed();
    spawned.leader.reap().await;
    took
}

/// This thread's CPU time so far (its POSIX CPU-time clock, on Linux and macOS alike).
fn thread_cpu() -> Duration {
    cpu_clock(nix::libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The time of a POSIX CPU-time clock.
fn cpu_clock(clock: nix::libc::clockid_t) -> Duration {
    let mut time = nix::libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let read = unsafe { nix::libc::clock_gettime(clock, &mut time) };
    assert_eq!(read, 0, "read a CPU-time clock");
    let nanos = u32::try_from(time.tv_nsec).expect("nanoseconds below 10^9");
    Duration::new(time.tv_sec.unsigned_abs(), nanos)
}
