//! The job object's promises, proven where Windows runs (under Wine here): a run's whole tree
//! (a child with a grandchild, a child in a new process group, a detached one) is gone after
//! the teardown, none of it can break away, the end of a run waits for its last descendant,
//! and closing the job's handle alone kills the tree.
//!
//! The tree is this very test binary started again in roles: [`tree_role`], an ignored test,
//! plays the role named by `CAM_WIN_TREE_ROLE` when a tree test starts it with `--ignored
//! --exact`. Every process of a tree carries the run's marker in its environment, and the
//! tests count them by it in the process table (Toolhelp and each process's PEB).

use std::ffi::OsString;
use std::os::windows::process::CommandExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use windows_sys::Win32::System::Threading::{
    CREATE_BREAKAWAY_FROM_JOB, CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS,
};

use super::{arguments, children, environment_value, process_ids, start_in_job};
use crate::command_line::CommandLine;
use crate::marker::{MARKER_VAR, RunMarker};
use crate::process::{self, Leader, Line, LineReader, Pipe, SpawnedCli};

/// The role a started copy of this binary plays.
const ROLE_VAR: &str = "CAM_WIN_TREE_ROLE";
/// The test that plays it.
const ROLE_TEST: &str = "platform::windows::tests::tree_role";
/// The roles of a whole tree: the leader, its child and grandchild, one in a new process
/// group, one detached. (A leader started without a console also has a console host,
/// `conhost.exe`, of its own in the job, marked too: the tree is six processes.)
const TREE: usize = 5;
/// How long the lingering grandchild of the `brief` role lives on after its leader exits.
const LINGER: Duration = Duration::from_millis(1500);
const PATIENCE: Duration = Duration::from_secs(30);

/// The arguments that make this binary play the role its environment names.
fn role_args() -> Vec<String> {
    [
        "--ignored",
        "--exact",
        ROLE_TEST,
        "--nocapture",
        "--test-threads=1",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Start `role` as a child of a role (plain, or with `flags`).
fn start_role(role: &str, flags: u32) -> std::io::Result<std::process::Child> {
    std::process::Command::new(std::env::current_exe()?)
        .args(role_args())
        .env(ROLE_VAR, role)
        .creation_flags(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// Not a test: the role of a process of a tree, when `CAM_WIN_TREE_ROLE` names one.
/// - `tree`: starts `middle`, a `sleeper` in a new process group and a detached one, tries a
///   child that breaks away from the job and says how that went, says it is ready, sleeps.
/// - `middle`: starts a `sleeper`, sleeps. `sleeper`: sleeps.
/// - `orphaner`: starts `middle` and a detached `sleeper`, and exits at once.
/// - `holder`: starts a `tree` through the engine's spawn (in a job of its own), says the
///   tree's marker and that it is ready, and holds the job until it is killed.
/// - `last_resort`: starts two `tree`s, kills every run at once as a server's last resort
///   does, and says how many processes that killed and the trees' markers.
/// - `brief`: starts a `linger` and exits at once. `linger`: lives [`LINGER`], then exits.
#[test]
#[ignore = "a role the tree tests start in child processes"]
#[expect(
    clippy::zombie_processes,
    reason = "Windows keeps no zombie; the run's job holds the children"
)]
fn tree_role() {
    let Ok(role) = std::env::var(ROLE_VAR) else {
        return;
    };
    match role.as_str() {
        "tree" => {
            start_role("middle", 0).unwrap();
            start_role("sleeper", CREATE_NEW_PROCESS_GROUP).unwrap();
            start_role("sleeper", DETACHED_PROCESS).unwrap();
            match start_role("sleeper", CREATE_BREAKAWAY_FROM_JOB) {
                Ok(mut escaped) => {
                    println!("CAM breakaway started {}", escaped.id());
                    let _ = escaped.kill();
                }
                Err(error) => println!("CAM breakaway refused: {error}"),
            }
            println!("CAM ready");
            sleep_forever();
        }
        "middle" => {
            start_role("sleeper", 0).unwrap();
            sleep_forever();
        }
        "sleeper" => sleep_forever(),
        "orphaner" => {
            start_role("middle", 0).unwrap();
            start_role("sleeper", DETACHED_PROCESS).unwrap();
            println!("CAM ready");
        }
        "holder" => hold_a_tree(),
        "last_resort" => kill_every_run_of_two(),
        "brief" => {
            start_role("linger", 0).unwrap();
            println!("CAM ready");
        }
        "linger" => std::thread::sleep(LINGER),
        other => panic!("unknown role {other}"),
    }
}

/// The `holder` role: a server's part, holding a run's job.
fn hold_a_tree() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let run = start("tree").await;
        wait_for_tree(run.marker.as_str()).await;
        println!("CAM marker {}", run.marker.as_str());
        println!("CAM ready");
        std::future::pending::<()>().await;
    });
}

/// The `last_resort` role: a server's last resort over two runs, alone in its process (every
/// run of the process is killed).
fn kill_every_run_of_two() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let runs = [start("tree").await, start("tree").await];
        for run in &runs {
            wait_for_tree(run.marker.as_str()).await;
            println!("CAM marker {}", run.marker.as_str());
        }
        println!("CAM killed {}", process::kill_every_run());
        println!("CAM ready");
        std::future::pending::<()>().await;
    });
}

/// The command line that starts this binary in `role`, marked with `marker` by the spawn.
fn role_command(role: &str) -> CommandLine {
    let mut env: Vec<(OsString, OsString)> = ["SystemRoot", "PATH", "TEMP", "TMP"]
        .iter()
        .filter_map(|name| Some((OsString::from(name), std::env::var_os(name)?)))
        .collect();
    env.push((ROLE_VAR.into(), role.into()));
    CommandLine {
        program: std::env::current_exe().unwrap().into(),
        args: role_args(),
        env,
    }
}

/// The processes now in the table with `marker` in their environment.
fn marked(marker: &str) -> Vec<u32> {
    process_ids()
        .into_iter()
        .filter(|&pid| environment_value(pid, MARKER_VAR).as_deref() == Some(marker))
        .collect()
}

/// Whether `pid` is this binary playing a role.
fn plays_a_role(pid: u32) -> bool {
    arguments(pid).is_some_and(|argv| argv.iter().any(|arg| arg == ROLE_TEST))
}

/// Wait until the [`TREE`] roles of a tree carry `marker`; then every process carrying it
/// (the roles and the console host). Panics after [`PATIENCE`].
async fn wait_for_tree(marker: &str) -> Vec<u32> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let pids = marked(marker);
        let roles = pids.iter().filter(|&&pid| plays_a_role(pid)).count();
        if roles == TREE {
            return pids;
        }
        assert!(
            Instant::now() < deadline,
            "the tree's {TREE} roles never all carried the marker: {pids:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The lines a role wrote up to its `CAM ready`.
async fn lines_until_ready(reader: &mut LineReader<Pipe>) -> Vec<String> {
    let mut lines = Vec::new();
    let read = async {
        while !reader.is_done() {
            reader.fill().await.unwrap();
            while let Some(line) = reader.next_line() {
                let Line::Complete(bytes) = line else {
                    continue;
                };
                // libtest's "test ... " starts the line a role's first words end.
                let line = String::from_utf8_lossy(bytes);
                let Some(at) = line.find("CAM ") else {
                    continue;
                };
                if &line[at..] == "CAM ready" {
                    return;
                }
                lines.push(line[at..].to_owned());
            }
        }
        panic!("the role ended without saying it was ready");
    };
    tokio::time::timeout(PATIENCE, read)
        .await
        .expect("the role said it was ready");
    lines
}

/// A run of `role` started through the engine's spawn, once it said it was ready: its
/// leader, its marker, the lines it wrote before, and its stdout and stderr, kept open (a role
/// whose output was closed would fail as it writes its test's result).
struct Started {
    leader: Leader,
    marker: RunMarker,
    lines: Vec<String>,
    _stdout: LineReader<Pipe>,
    _stderr: tokio::process::ChildStderr,
}

async fn start(role: &str) -> Started {
    let marker = RunMarker::new();
    let spawned =
        process::spawn(&role_command(role), &std::env::temp_dir(), &marker, None).unwrap();
    let SpawnedCli {
        leader,
        stdout,
        stderr,
        ..
    } = spawned;
    let mut stdout = LineReader::new(stdout, 64 * 1024);
    let lines = lines_until_ready(&mut stdout).await;
    Started {
        leader,
        marker,
        lines,
        _stdout: stdout,
        _stderr: stderr,
    }
}

#[tokio::test]
async fn a_tree_with_new_groups_and_detached_children_is_gone_after_the_teardown() {
    let run = start("tree").await;
    let (leader, marker) = (&run.leader, &run.marker);
    let mut pids = wait_for_tree(marker.as_str()).await;
    let job = leader.watch().job().clone();
    let mut in_job = job.process_ids().unwrap();
    in_job.sort_unstable();
    pids.sort_unstable();
    assert_eq!(in_job, pids, "the job's processes are the marked ones");
    assert_eq!(job.active_processes().unwrap() as usize, pids.len());
    let roles: Vec<u32> = children(leader.pid())
        .into_iter()
        .filter(|&pid| plays_a_role(pid))
        .collect();
    assert_eq!(roles.len(), 3, "middle and two sleepers: {roles:?}");

    let started = Instant::now();
    assert!(leader.kill());
    leader.exited().await;
    process::sweep(leader, marker).await;
    let took = started.elapsed();
    eprintln!(
        "teardown of a {}-process tree: {} ms",
        pids.len(),
        took.as_millis()
    );

    assert_eq!(job.active_processes().unwrap(), 0);
    assert_eq!(
        marked(marker.as_str()),
        Vec::<u32>::new(),
        "left of the tree"
    );
    let Started { leader, .. } = run;
    assert_eq!(
        leader.reap().await.and_then(|status| status.code()),
        Some(1),
        "terminated with the job's exit code"
    );
}

#[tokio::test]
async fn what_a_leader_that_exited_left_running_is_swept() {
    let run = start("orphaner").await;
    run.leader.exited().await;
    // Its child, grandchild and detached child, once the child has started the grandchild.
    let deadline = Instant::now() + PATIENCE;
    while marked(run.marker.as_str())
        .into_iter()
        .filter(|&pid| plays_a_role(pid))
        .count()
        < 3
    {
        assert!(
            Instant::now() < deadline,
            "{:?}",
            marked(run.marker.as_str())
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    let swept = process::sweep(&run.leader, &run.marker).await;
    eprintln!(
        "{swept} processes left by an exited leader swept in {} ms",
        started.elapsed().as_millis()
    );
    assert!(swept >= 3, "{swept}");
    assert_eq!(
        marked(run.marker.as_str()),
        Vec::<u32>::new(),
        "left of the tree"
    );
    let Started { leader, .. } = run;
    assert_eq!(
        leader.reap().await.and_then(|status| status.code()),
        Some(0)
    );
}

#[tokio::test]
async fn a_child_asking_to_break_away_from_the_runs_job_is_refused() {
    let run = start("tree").await;
    let said: Vec<&String> = run
        .lines
        .iter()
        .filter(|line| line.starts_with("CAM breakaway"))
        .collect();
    assert_eq!(said.len(), 1, "{:?}", run.lines);
    assert!(said[0].starts_with("CAM breakaway refused"), "{}", said[0]);
    wait_for_tree(run.marker.as_str()).await;
    assert!(run.leader.kill());
    process::sweep(&run.leader, &run.marker).await;
    assert_eq!(marked(run.marker.as_str()), Vec::<u32>::new());
}

#[tokio::test]
async fn the_end_of_a_run_waits_for_its_last_descendant() {
    let run = start("brief").await;
    run.leader.exited().await;
    let exited = Instant::now();
    let job = run.leader.watch().job().clone();
    let empty = tokio::task::spawn_blocking(move || job.wait_empty(PATIENCE))
        .await
        .unwrap();
    let waited = exited.elapsed();
    eprintln!(
        "the job emptied {} ms after its leader exited",
        waited.as_millis()
    );
    assert!(empty);
    assert_eq!(
        marked(run.marker.as_str()),
        Vec::<u32>::new(),
        "the job said empty too soon"
    );
    assert!(
        waited >= LINGER / 2,
        "returned {} ms after the leader's exit",
        waited.as_millis()
    );
}

#[tokio::test]
async fn closing_the_job_kills_the_tree() {
    let marker = RunMarker::new();
    let command = role_command("tree");
    let mut cmd = tokio::process::Command::new(&command.program);
    cmd.args(&command.args)
        .env_clear()
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .env(MARKER_VAR, marker.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let (child, watch) = start_in_job(&mut cmd).unwrap();
    let pids = wait_for_tree(marker.as_str()).await;

    // No terminate: the job's last handles close, and kill-on-close does the rest.
    let started = Instant::now();
    drop(watch);
    let deadline = started + PATIENCE;
    while !marked(marker.as_str()).is_empty() {
        assert!(Instant::now() < deadline, "the tree outlived its job");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    eprintln!(
        "a {}-process tree gone {} ms after its job closed",
        pids.len(),
        started.elapsed().as_millis()
    );
    drop(child);
}

#[tokio::test]
async fn the_death_of_the_process_holding_the_job_kills_the_tree() {
    let mut holder = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(role_args())
        .env(ROLE_VAR, "holder")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = LineReader::new(Pipe::new(holder.stdout.take().unwrap()), 64 * 1024);
    let lines = lines_until_ready(&mut stdout).await;
    let marker = lines
        .iter()
        .find_map(|line| line.strip_prefix("CAM marker "))
        .expect("the holder said its tree's marker")
        .to_owned();
    let pids = wait_for_tree(&marker).await;

    // TerminateProcess: the holder runs no code of its own on the way out, as after a kill -9.
    let started = Instant::now();
    holder.start_kill().unwrap();
    let deadline = started + PATIENCE;
    while !marked(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the tree outlived the holder of its job"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    eprintln!(
        "a {}-process tree gone {} ms after the process holding its job was killed",
        pids.len(),
        started.elapsed().as_millis()
    );
}

#[tokio::test]
async fn the_figures_of_a_live_process_read_and_those_of_an_exited_one_do_not() {
    let mut sleeper = start_role("sleeper", 0).unwrap();
    let pid = sleeper.id();
    let deadline = Instant::now() + PATIENCE;
    while !plays_a_role(pid) {
        assert!(
            Instant::now() < deadline,
            "the sleeper never showed its arguments"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(super::process_start(pid).is_some());
    assert!(super::cpu_time_of(pid).is_some());
    assert!(super::resident_bytes(pid).is_some_and(|bytes| bytes > 0));
    assert_eq!(environment_value(pid, ROLE_VAR).as_deref(), Some("sleeper"));
    assert_eq!(
        environment_value(pid, &ROLE_VAR.to_lowercase()).as_deref(),
        Some("sleeper"),
        "names are matched regardless of case"
    );
    assert!(super::cpu_time() > Duration::ZERO);

    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    // Our handle keeps the exited process listed; it is no longer alive.
    assert_eq!(super::process_start(pid), None);
    assert!(!crate::platform::is_alive(pid));
}

#[tokio::test]
async fn a_stop_without_a_console_to_interrupt_through_kills_at_once() {
    // These tests run without a console, as a server started by a desktop host does.
    let run = start("tree").await;
    wait_for_tree(run.marker.as_str()).await;
    let started = Instant::now();
    assert!(
        !run.leader.interrupt(),
        "a Ctrl-Break was sent without a console"
    );
    run.leader.exited().await;
    let job = run.leader.watch().job().clone();
    let empty = tokio::task::spawn_blocking(move || job.wait_empty(Duration::from_secs(5)));
    assert!(empty.await.unwrap(), "the job was not terminated");
    eprintln!(
        "stopped without a grace in {} ms",
        started.elapsed().as_millis()
    );
    assert_eq!(marked(run.marker.as_str()), Vec::<u32>::new());
}

#[tokio::test]
async fn the_last_resort_terminates_every_run_of_the_process() {
    let mut server = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(role_args())
        .env(ROLE_VAR, "last_resort")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = LineReader::new(Pipe::new(server.stdout.take().unwrap()), 64 * 1024);
    let lines = lines_until_ready(&mut stdout).await;
    let said = |what: &str| -> Vec<String> {
        let prefix = format!("CAM {what} ");
        lines
            .iter()
            .filter_map(|line| line.strip_prefix(prefix.as_str()).map(str::to_owned))
            .collect()
    };
    let markers = said("marker");
    assert_eq!(markers.len(), 2, "{lines:?}");
    let killed: usize = said("killed")[0].parse().unwrap();
    assert!(killed >= 2 * TREE, "{killed} processes killed");
    let deadline = Instant::now() + PATIENCE;
    while markers.iter().any(|marker| !marked(marker).is_empty()) {
        assert!(Instant::now() < deadline, "a run outlived the last resort");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.start_kill().unwrap();
}
