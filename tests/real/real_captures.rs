//! Regenerates the golden captures in tests/fixtures/captures/<cli>/<scenario>.jsonl: the raw
//! stdout of each real CLI, run with the engine's own command line against the mock model.
//! The dialect parsers' unit tests read these files, so they test what the pinned CLI
//! versions really print. Run it with `scripts/regen-captures.sh` after changing a pin.

use crate::common;
use crate::real;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cli_agent_engine::{Agent, AgentEvent, Permission, RunRequest, clis};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use real::{MockModel, Retries, Sandbox, closed_port};

struct Scenario {
    name: &'static str,
    prompt: &'static str,
    permission: Permission,
    resume: bool,
    refused: bool,
    /// SIGINT to the group, as the engine sends it, once this many stdout lines contain
    /// this text (and the mock has seen the prompt).
    interrupt: Option<(&'static str, usize)>,
}

const fn scenario(name: &'static str, prompt: &'static str) -> Scenario {
    Scenario {
        name,
        prompt,
        permission: Permission::ReadOnly,
        resume: false,
        refused: false,
        interrupt: None,
    }
}

fn scenarios(agent: Agent) -> Vec<Scenario> {
    let shell = real::shell_permission(agent);
    let resumes = agent.cli().resumes().is_ok();
    let all = vec![
        scenario("plain", "say hello"),
        scenario("reasoning", "THINK then say hello"),
        Scenario {
            permission: shell,
            ..scenario("tool_call", "RUN_SHELL: echo captured-tool-output")
        },
        Scenario {
            resume: true,
            ..scenario("resume", "ANSWER: second turn")
        },
        scenario("error_400", "FAIL_400"),
        scenario("error_401", "FAIL_401"),
        scenario("error_429", "FAIL_429"),
        scenario("error_500", "FAIL_500"),
        Scenario {
            // opencode calls the model again after every cut, forever; the engine stops it
            // after three cut steps, and so does the capture.
            interrupt: (agent == clis::OPENCODE).then_some((r#""reason":"unknown""#, 3)),
            ..scenario("stream_cut", "DROP")
        },
        Scenario {
            refused: true,
            ..scenario("connection_refused", "say hello")
        },
        Scenario {
            interrupt: Some(("", 1)),
            ..scenario("cancelled", "SLOW: 60")
        },
    ];
    // A CLI that cannot resume (cline) has no resumed session to capture.
    all.into_iter()
        .filter(|scenario| resumes || !scenario.resume)
        .collect()
}

fn captures_dir(agent: Agent) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/captures")
        .join(agent.name())
}

#[test]
#[ignore = "regenerates fixtures; run scripts/regen-captures.sh"]
fn regenerate_golden_captures() {
    common::adopt_orphans();
    let agents: Vec<Agent> = match std::env::var("CAM_CAPTURE_AGENTS") {
        Ok(list) => list
            .split(',')
            .map(|name| clis::builtin(name).map(Agent::builtin).expect("agent name"))
            .collect(),
        Err(_) => clis::builtin_agents().collect::<Vec<_>>(),
    };
    let threads: Vec<_> = agents
        .into_iter()
        .map(|agent| std::thread::spawn(move || capture_agent(agent)))
        .collect();
    for thread in threads {
        thread.join().expect("capture thread");
    }
}

fn capture_agent(agent: Agent) {
    let bin = real::installed(agent).expect("the real CLIs are installed");
    let dir = captures_dir(agent);
    std::fs::create_dir_all(&dir).expect("captures dir");
    let mock = MockModel::start();
    for scenario in scenarios(agent) {
        let port = if scenario.refused {
            closed_port()
        } else {
            mock.port
        };
        let sandbox = Sandbox::new(agent, &bin, port, Retries::Shortened);
        let session = if scenario.resume {
            // The resumed session must live in this sandbox: start it here first.
            let first = capture(&sandbox, &mock, &scenario, "ANSWER: first turn", None);
            Some(session_of(agent, &first).expect("the first turn reports its session"))
        } else {
            None
        };
        let stdout = capture(&sandbox, &mock, &scenario, scenario.prompt, session);
        let text = normalise(&stdout, &sandbox);
        std::fs::write(dir.join(format!("{}.jsonl", scenario.name)), text).expect("write");
        eprintln!(
            "{agent}/{}: {} lines",
            scenario.name,
            stdout.lines().count()
        );
    }
}

/// The CLI's raw stdout for one prompt, run with the engine's command line.
fn capture(
    sandbox: &Sandbox,
    mock: &MockModel,
    scenario: &Scenario,
    prompt: &str,
    session: Option<String>,
) -> String {
    let mut request = RunRequest::new(prompt, &sandbox.workspace);
    request.permission = scenario.permission;
    request.session_id = session;
    let line = sandbox
        .agent
        .command_line(&request, &sandbox.wrapper, &[])
        .expect("command line");
    let mut child = Command::new(&line.program)
        .args(&line.args)
        .env_clear()
        .envs(line.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&sandbox.workspace)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the CLI");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(prompt.as_bytes())
        .expect("write the prompt");
    drop(stdin);
    let group = Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    let lines = Arc::new(Mutex::new(Vec::new()));
    let reader = std::thread::spawn({
        let lines = Arc::clone(&lines);
        let stdout = child.stdout.take().expect("stdout");
        move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                lines.lock().expect("lines").push(line);
            }
        }
    });
    if let Some((needle, count)) = scenario.interrupt {
        wait_for(|| {
            let lines = lines.lock().expect("lines");
            lines.iter().filter(|line| line.contains(needle)).count() >= count
                && !mock.requests_with(sandbox.agent, prompt).is_empty()
        });
        let _ = killpg(group, Signal::SIGINT);
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = killpg(group, Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().expect("reader");
    for pid in sandbox.survivors() {
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let lines = lines.lock().expect("lines");
    lines.iter().map(|line| format!("{line}\n")).collect()
}

fn wait_for(condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The session id in `stdout`, read by the engine's own parser for `agent`.
fn session_of(agent: Agent, stdout: &str) -> Option<String> {
    let mut dialect = agent.cli().dialect();
    let mut events = Vec::new();
    stdout.lines().find_map(|line| {
        events.clear();
        dialect.parse_line(line, &mut events).ok()?;
        events.iter().find_map(|event| match event {
            AgentEvent::SessionStarted { session_id, .. } => Some(session_id.clone()),
            _ => None,
        })
    })
}

/// The sandbox's temp path becomes `<sandbox>`, so regenerating only changes what the CLI
/// changed.
fn normalise(stdout: &str, sandbox: &Sandbox) -> String {
    let root = sandbox.root().display().to_string();
    stdout.replace(&root, "<sandbox>")
}
