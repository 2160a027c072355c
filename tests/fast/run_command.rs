//! `cli-agent-mcp run` end to end, against the fake CLI in tests/fixtures: exit codes, the
//! `--json` outcome, how the prompt, permission, workspace and environment reach the CLI, what
//! goes to stdout and stderr, and that a signal to `run` leaves no process behind.

use crate::common;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{DEADLINE, temp_dir, unique};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde_json::Value;

/// How long a `run` may take overall before the test gives up on it.
const RUN_DEADLINE: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(25);

// ---------------------------------------------------------------------------------------------
// Helpers

fn fake(agent: &str) -> PathBuf {
    common::fake_cli(agent)
}

fn bin_env_var(agent: &str) -> String {
    format!("CAM_{}_BIN", agent.to_ascii_uppercase())
}

/// `cli-agent-mcp` with none of the caller's settings, its runs recorded in the temp dir;
/// unconfined, because the fake records its argv (`argv-out`) outside what the kernel sandbox
/// would let a read-only run write (tests/fast/sandbox.rs proves the sandbox).
fn cam() -> Command {
    let mut cmd = common::cam_command();
    cmd.env("CAM_STATE_DIR", std::env::temp_dir().join("cam-test-state"))
        .env("CAM_SANDBOX", "off");
    cmd
}

/// `cli-agent-mcp run <agent> --workspace <ws>` with `agent` pointed at the fake.
fn cam_run(agent: &str, workspace: &Path) -> Command {
    let mut cmd = cam();
    cmd.env(bin_env_var(agent), fake(agent));
    cmd.arg("run").arg(agent).arg("--workspace").arg(workspace);
    cmd
}

/// What a finished `run` left.
struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Finished {
    fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

impl std::fmt::Debug for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// A running `cli-agent-mcp` whose stdout and stderr are being collected.
struct Running {
    child: Child,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

impl Running {
    fn start(mut cmd: Command, stdin: Option<&[u8]>) -> Self {
        if stdin.is_some() {
            cmd.stdin(Stdio::piped());
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start cli-agent-mcp");
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().expect("stdin pipe");
            pipe.write_all(input).expect("write the prompt to stdin");
            // Dropping the pipe closes it: the prompt ends here.
        }
        let stdout = child.stdout.take().map(drain);
        let stderr = child.stderr.take().map(drain);
        Self {
            child,
            stdout,
            stderr,
        }
    }

    fn pid(&self) -> Pid {
        Pid::from_raw(self.child.id() as i32)
    }

    fn signal(&self, signal: Signal) {
        nix::sys::signal::kill(self.pid(), signal).expect("signal cli-agent-mcp");
    }

    /// Wait (polling) for the exit; a `run` that outlives the deadline is killed and fails the test.
    fn finish(mut self) -> Finished {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for cli-agent-mcp") {
                break status;
            }
            if start.elapsed() > RUN_DEADLINE {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("cli-agent-mcp did not exit within {RUN_DEADLINE:?}");
            }
            std::thread::sleep(POLL);
        };
        let text = |handle: Option<JoinHandle<Vec<u8>>>| {
            let bytes = handle
                .map(|h| h.join().expect("reader thread"))
                .unwrap_or_default();
            String::from_utf8_lossy(&bytes).into_owned()
        };
        Finished {
            status,
            stdout: text(self.stdout.take()),
            stderr: text(self.stderr.take()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Only reached with the child still running when a test panicked.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn run(cmd: Command) -> Finished {
    Running::start(cmd, None).finish()
}

fn run_with_stdin(cmd: Command, stdin: &[u8]) -> Finished {
    Running::start(cmd, Some(stdin)).finish()
}

/// The `argv-out` file the fake wrote.
fn recorded(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| {
        panic!("the fake wrote no argv-out at {}: {error}", path.display())
    });
    serde_json::from_str(&text).expect("argv-out is JSON")
}

fn recorded_argv(record: &Value) -> Vec<String> {
    record["argv"]
        .as_array()
        .expect("argv is an array")
        .iter()
        .map(|a| a.as_str().expect("argv items are strings").to_owned())
        .collect()
}

/// Pids of live processes whose environment holds `name=value`.
fn processes_with_env(name: &str, value: &str) -> Vec<i32> {
    common::pids_with_env(&format!("{name}={value}"))
}

fn tagged(tag: &str) -> Vec<i32> {
    processes_with_env("FAKE_CLI_TAG", tag)
}

/// Poll until `condition` holds; fail the test after the deadline.
fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < DEADLINE,
            "timed out after {DEADLINE:?} waiting for {what}"
        );
        std::thread::sleep(POLL);
    }
}

fn assert_has_pair(argv: &[String], flag: &str, value: &str) {
    assert!(
        argv.windows(2).any(|w| w[0] == flag && w[1] == value),
        "expected `{flag} {value}` in argv {argv:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Exit codes

#[test]
fn completed_run_exits_0_with_the_answer_on_stdout() {
    let ws = temp_dir("completed");
    let mut cmd = cam_run("codex", ws.path());
    cmd.arg("answer=all_done_here");
    let out = run(cmd);
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.stdout, "all done here\n", "{out:?}");
}

#[test]
fn failed_run_exits_1_with_the_message_on_stderr() {
    let ws = temp_dir("failed");
    let mut cmd = cam_run("codex", ws.path());
    cmd.arg("fail=the_model_said_no");
    let out = run(cmd);
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("the model said no"), "{out:?}");
    assert!(out.stderr.contains("failed"), "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
}

#[test]
fn timed_out_run_exits_124_and_stderr_names_the_timeout() {
    let ws = temp_dir("timeout");
    let mut cmd = cam_run("codex", ws.path());
    cmd.args(["--timeout-secs", "1", "hang"]);
    let out = run(cmd);
    assert_eq!(out.code(), Some(124), "{out:?}");
    assert!(out.stderr.contains("timed_out"), "{out:?}");
    assert!(out.stderr.contains("timeout"), "{out:?}");
}

#[test]
fn configured_cli_that_does_not_exist_exits_2_naming_the_binary_package_and_env_var() {
    let ws = temp_dir("missing-bin");
    let missing = ws.path().join("no-such-dir/codex");
    let mut cmd = cam();
    cmd.env("CAM_CODEX_BIN", &missing);
    cmd.arg("run")
        .arg("codex")
        .arg("--workspace")
        .arg(ws.path())
        .arg("hi");
    let out = run(cmd);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(
        out.stderr.contains(&missing.display().to_string()),
        "{out:?}"
    );
    assert!(out.stderr.contains("@openai/codex"), "{out:?}");
    assert!(out.stderr.contains("CAM_CODEX_BIN"), "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
}

#[test]
fn cli_missing_from_path_exits_2_naming_where_it_looked_the_package_and_env_var() {
    let ws = temp_dir("missing-path");
    let empty = temp_dir("empty-path");
    let mut cmd = cam();
    cmd.env("PATH", empty.path());
    cmd.arg("run")
        .arg("codex")
        .arg("--workspace")
        .arg(ws.path())
        .arg("hi");
    let out = run(cmd);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("`codex`"), "{out:?}");
    assert!(out.stderr.contains("PATH"), "{out:?}");
    assert!(
        out.stderr.contains(&empty.path().display().to_string()),
        "{out:?}"
    );
    assert!(out.stderr.contains("@openai/codex"), "{out:?}");
    assert!(out.stderr.contains("CAM_CODEX_BIN"), "{out:?}");
}

#[test]
fn missing_workspace_exits_2_without_starting_the_cli() {
    let scratch = temp_dir("missing-ws");
    let missing = scratch.path().join("not-a-dir");
    let argv_out = scratch.path().join("argv.json");
    let mut cmd = cam_run("codex", &missing);
    cmd.arg(format!("argv-out={}", argv_out.display()));
    let out = run(cmd);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(
        out.stderr.contains(&missing.display().to_string()),
        "{out:?}"
    );
    assert!(!argv_out.exists(), "the CLI ran: {out:?}");
}

#[test]
fn unknown_permission_is_a_usage_error_exit_2() {
    let ws = temp_dir("bad-permission");
    let argv_out = ws.path().join("argv.json");
    let mut cmd = cam_run("codex", ws.path());
    cmd.args(["--permission", "root-please"])
        .arg(format!("argv-out={}", argv_out.display()));
    let out = run(cmd);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("root-please"), "{out:?}");
    assert!(out.stderr.contains("--permission"), "{out:?}");
    assert!(!argv_out.exists(), "the CLI ran: {out:?}");
}

#[test]
fn fork_and_effort_reach_the_cli_and_what_it_lacks_exits_2_saying_why() {
    let ws = temp_dir("run-fork");
    let argv_out = ws.path().join("argv.json");
    let mut cmd = cam_run("codex", ws.path());
    cmd.args(["--session-id", "0199-thread", "--fork", "--effort", "max"])
        .arg(format!("argv-out={}", argv_out.display()));
    let out = run(cmd);
    assert_eq!(out.code(), Some(0), "{out:?}");
    let argv = recorded_argv(&recorded(&argv_out));
    assert_eq!(argv[..2], ["exec", "fork"], "{argv:?}");
    assert!(
        argv.contains(&"0199-thread".to_owned())
            && argv.contains(&"--config=model_reasoning_effort=\"max\"".to_owned()),
        "{argv:?}"
    );
    let session = out
        .stderr
        .lines()
        .find_map(|line| line.strip_prefix("session: "));
    assert!(session.is_some_and(|id| id != "0199-thread"), "{out:?}");

    let cases: [(&str, &[&str], &str); 3] = [
        (
            "gemini",
            &["--session-id", "s-1", "--fork"],
            "gemini cannot take `fork`",
        ),
        ("qwen", &["--effort", "low"], "qwen cannot take `effort`"),
        ("codex", &["--fork"], "--session-id"),
    ];
    for (agent, args, expected) in cases {
        std::fs::remove_file(&argv_out).ok();
        let mut cmd = cam_run(agent, ws.path());
        cmd.args(args)
            .arg(format!("argv-out={}", argv_out.display()));
        let out = run(cmd);
        assert_eq!(out.code(), Some(2), "{agent} {args:?}: {out:?}");
        assert!(out.stderr.contains(expected), "{agent} {args:?}: {out:?}");
        assert!(!argv_out.exists(), "the CLI ran: {out:?}");
    }
}

/// Send `signal` to `run` while the fake hangs with descendants of every kind, then check the
/// exit code and that nothing of the run is left.
fn signal_leaves_nothing_behind(signal: Signal, expected_code: i32) {
    let ws = temp_dir(&format!("signal-{}", signal.as_str()));
    let tag = unique(signal.as_str());
    let argv_out = ws.path().join("argv.json");
    let mut cmd = cam_run("codex", ws.path());
    cmd.arg(format!(
        "hang children=2 session-child daemon tag={tag} argv-out={}",
        argv_out.display()
    ));
    let running = Running::start(cmd, None);
    // 2 children, 1 session child, 1 daemon sleeper.
    wait_until("the fake's 4 tagged descendants", || {
        tagged(&tag).len() >= 4
    });
    let run_id = recorded(&argv_out)["env"]["CAM_RUN_ID"]
        .as_str()
        .expect("the fake saw CAM_RUN_ID")
        .to_owned();
    assert!(
        !processes_with_env("CAM_RUN_ID", &run_id).is_empty(),
        "the fake and its descendants carry CAM_RUN_ID={run_id}"
    );

    running.signal(signal);
    let out = running.finish();

    assert_eq!(out.code(), Some(expected_code), "{out:?}");
    assert_eq!(tagged(&tag), Vec::<i32>::new(), "tagged survivors: {out:?}");
    assert_eq!(
        processes_with_env("CAM_RUN_ID", &run_id),
        Vec::<i32>::new(),
        "survivors of run {run_id}: {out:?}"
    );
}

#[test]
fn sigint_exits_130_and_leaves_no_process_behind() {
    signal_leaves_nothing_behind(Signal::SIGINT, 130);
}

#[test]
fn sigterm_exits_143_and_leaves_no_process_behind() {
    signal_leaves_nothing_behind(Signal::SIGTERM, 143);
}

// ---------------------------------------------------------------------------------------------
// --json

const OUTCOME_KEYS: [&str; 13] = [
    "agent",
    "status",
    "answer",
    "session_id",
    "reasoning",
    "tools",
    "usage",
    "exit_code",
    "exit_signal",
    "duration_ms",
    "stderr_tail",
    "warnings",
    "error",
];

fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// stdout holds exactly one JSON object (and a newline); return it after checking its shape.
fn single_outcome(out: &Finished) -> Value {
    assert!(out.stdout.ends_with('\n'), "{out:?}");
    let values: Vec<Value> = serde_json::Deserializer::from_str(&out.stdout)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|error| panic!("stdout is not JSON ({error}): {out:?}"));
    assert_eq!(values.len(), 1, "{out:?}");
    assert_eq!(out.stdout.trim_end().lines().count(), 1, "{out:?}");
    let outcome = values.into_iter().next().expect("one value");
    let expected: BTreeSet<&str> = OUTCOME_KEYS.into_iter().collect();
    assert_eq!(keys(&outcome), expected, "{outcome}");
    assert_eq!(
        keys(&outcome["tools"]),
        BTreeSet::from(["calls", "failed", "recent"]),
        "{outcome}"
    );
    assert!(outcome["duration_ms"].is_u64(), "{outcome}");
    assert!(outcome["stderr_tail"].is_string(), "{outcome}");
    assert!(outcome["warnings"].is_array(), "{outcome}");
    outcome
}

#[test]
fn json_prints_one_outcome_object_for_a_completed_run() {
    let ws = temp_dir("json-ok");
    let mut cmd = cam_run("codex", ws.path());
    cmd.args(["--json", "tool reasoning"]);
    let out = run(cmd);
    assert_eq!(out.code(), Some(0), "{out:?}");
    let o = single_outcome(&out);

    assert_eq!(o["agent"], "codex", "{o}");
    assert_eq!(o["status"], "completed", "{o}");
    assert_eq!(o["answer"], "hello from fake codex", "{o}");
    assert!(
        o["session_id"].as_str().is_some_and(|s| !s.is_empty()),
        "{o}"
    );
    assert!(
        o["reasoning"]
            .as_str()
            .is_some_and(|r| r.contains("Thinking")),
        "{o}"
    );
    assert_eq!(o["tools"]["calls"], 1, "{o}");
    assert_eq!(o["tools"]["failed"], 0, "{o}");
    let recent = o["tools"]["recent"].as_array().expect("recent is an array");
    assert_eq!(recent.len(), 1, "{o}");
    assert!(
        recent[0]["command"]
            .as_str()
            .is_some_and(|c| c.contains("echo hi")),
        "{o}"
    );
    assert_eq!(recent[0]["exit_code"], 0, "{o}");
    assert_eq!(recent[0]["success"], true, "{o}");
    assert_eq!(
        keys(&o["usage"]),
        BTreeSet::from([
            "input_tokens",
            "cached_input_tokens",
            "output_tokens",
            "reasoning_tokens",
            "cost_usd"
        ]),
        "{o}"
    );
    assert_eq!(o["usage"]["input_tokens"], 100, "{o}");
    assert_eq!(o["usage"]["cached_input_tokens"], 20, "{o}");
    assert_eq!(o["usage"]["output_tokens"], 7, "{o}");
    assert_eq!(o["usage"]["reasoning_tokens"], 3, "{o}");
    assert!(o["usage"]["cost_usd"].is_null(), "{o}");
    assert_eq!(o["exit_code"], 0, "{o}");
    assert!(o["exit_signal"].is_null(), "{o}");
    assert!(o["error"].is_null(), "{o}");
}

#[test]
fn json_prints_one_outcome_object_with_the_error_for_a_failed_run() {
    let ws = temp_dir("json-fail");
    let mut cmd = cam_run("codex", ws.path());
    cmd.args(["--json", "fail=x"]);
    let out = run(cmd);
    assert_eq!(out.code(), Some(1), "{out:?}");
    let o = single_outcome(&out);

    assert_eq!(o["agent"], "codex", "{o}");
    assert_eq!(o["status"], "failed", "{o}");
    assert_eq!(o["answer"], "", "{o}");
    assert_eq!(o["exit_code"], 1, "{o}");
    assert!(o["exit_signal"].is_null(), "{o}");
    assert_eq!(
        keys(&o["error"]),
        BTreeSet::from(["kind", "message", "hint"]),
        "{o}"
    );
    assert_eq!(o["error"]["kind"], "agent_error", "{o}");
    assert_eq!(o["error"]["message"], "x", "{o}");
}

// ---------------------------------------------------------------------------------------------
// What reaches the CLI

const FLAG_LIKE_PROMPT: &str = "--dangerously-bypass-approvals-and-sandbox";

fn assert_prompt_is_text_not_a_flag(agent: &str, record: &Value, argv_out: &Path) {
    let argv = recorded_argv(record);
    assert!(
        !argv.iter().any(|a| a.contains(FLAG_LIKE_PROMPT)),
        "{agent}: the prompt reached argv: {argv:?}"
    );
    assert!(
        !argv
            .iter()
            .any(|a| a.contains(&argv_out.display().to_string())),
        "{agent}: the prompt reached argv: {argv:?}"
    );
    let prompt = record["prompt"].as_str().expect("prompt is a string");
    assert!(prompt.contains(FLAG_LIKE_PROMPT), "{agent}: {record}");
    assert!(
        prompt.contains(&format!("argv-out={}", argv_out.display())),
        "{agent}: {record}"
    );
}

#[test]
fn prompt_reaches_every_cli_as_text_never_as_a_flag() {
    for agent in cli_agent_engine::clis::BUILTINS
        .iter()
        .map(|cli| cli.name())
    {
        let ws = temp_dir(&format!("prompt-arg-{agent}"));
        let argv_out = ws.path().join("argv.json");
        let mut cmd = cam_run(agent, ws.path());
        cmd.arg("--").arg(format!(
            "{FLAG_LIKE_PROMPT} argv-out={}",
            argv_out.display()
        ));
        let out = run(cmd);
        assert_eq!(out.code(), Some(0), "{agent}: {out:?}");
        assert_prompt_is_text_not_a_flag(agent, &recorded(&argv_out), &argv_out);
    }
}

#[test]
fn prompt_read_from_stdin_reaches_the_cli_as_text_never_as_a_flag() {
    let ws = temp_dir("prompt-stdin");
    let argv_out = ws.path().join("argv.json");
    let mut cmd = cam_run("codex", ws.path());
    cmd.arg("-");
    let prompt = format!("{FLAG_LIKE_PROMPT} argv-out={}", argv_out.display());
    let out = run_with_stdin(cmd, prompt.as_bytes());
    assert_eq!(out.code(), Some(0), "{out:?}");
    let record = recorded(&argv_out);
    assert_prompt_is_text_not_a_flag("codex", &record, &argv_out);
    assert_eq!(record["prompt"], prompt.as_str(), "{record}");
}

fn codex_argv_with(permission: Option<&str>) -> Vec<String> {
    let ws = temp_dir("codex-permission");
    let argv_out = ws.path().join("argv.json");
    let mut cmd = cam_run("codex", ws.path());
    if let Some(permission) = permission {
        cmd.args(["--permission", permission]);
    }
    cmd.arg(format!("argv-out={}", argv_out.display()));
    let out = run(cmd);
    assert_eq!(out.code(), Some(0), "{permission:?}: {out:?}");
    recorded_argv(&recorded(&argv_out))
}

#[test]
fn codex_read_only_is_the_default_and_maps_to_the_read_only_sandbox() {
    let default = codex_argv_with(None);
    assert_has_pair(&default, "-s", "read-only");
    let explicit = codex_argv_with(Some("read-only"));
    assert_has_pair(&explicit, "-s", "read-only");
}

#[test]
fn codex_workspace_write_maps_to_the_workspace_write_sandbox() {
    let argv = codex_argv_with(Some("workspace-write"));
    assert_has_pair(&argv, "-s", "workspace-write");
    assert!(!argv.iter().any(|a| a == "read-only"), "{argv:?}");
}

#[test]
fn opencode_read_only_denies_bash_through_opencode_permission() {
    let ws = temp_dir("opencode-read-only");
    let argv_out = ws.path().join("argv.json");
    let mut cmd = cam_run("opencode", ws.path());
    cmd.args(["--permission", "read-only"])
        .arg(format!("argv-out={}", argv_out.display()));
    let out = run(cmd);
    assert_eq!(out.code(), Some(0), "{out:?}");
    let record = recorded(&argv_out);
    let policy = record["env"]["OPENCODE_PERMISSION"]
        .as_str()
        .unwrap_or_else(|| panic!("no OPENCODE_PERMISSION: {record}"));
    let policy: Value = serde_json::from_str(policy).expect("OPENCODE_PERMISSION is JSON");
    assert_eq!(policy["bash"], "deny", "{policy}");
    assert_eq!(policy["edit"], "deny", "{policy}");
}

#[test]
fn claude_unlimited_as_root_without_is_sandbox_exits_2_mentioning_is_sandbox() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: not running as root, so claude's root refusal does not apply");
        return;
    }
    let ws = temp_dir("claude-root");
    let argv_out = ws.path().join("argv.json");
    let mut cmd = cam_run("claude", ws.path());
    cmd.args(["--permission", "unlimited"])
        .arg(format!("argv-out={}", argv_out.display()));
    let out = run(cmd);
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("IS_SANDBOX"), "{out:?}");
    assert!(!argv_out.exists(), "the CLI ran: {out:?}");
}

#[test]
fn workspace_becomes_the_clis_working_directory() {
    let ws = temp_dir("cwd");
    let scratch = temp_dir("cwd-scratch");
    let argv_out = scratch.path().join("argv.json");
    let mut cmd = cam_run("codex", ws.path());
    // Run from elsewhere, so the CLI's cwd can only come from --workspace.
    cmd.current_dir(scratch.path())
        .arg(format!("argv-out={}", argv_out.display()));
    let out = run(cmd);
    assert_eq!(out.code(), Some(0), "{out:?}");
    let record = recorded(&argv_out);
    let cwd = PathBuf::from(record["cwd"].as_str().expect("cwd is a string"));
    assert_eq!(
        cwd.canonicalize().expect("the recorded cwd exists"),
        ws.path().canonicalize().expect("the workspace exists"),
        "{record}"
    );
}

#[test]
fn cli_gets_the_variables_cam_pass_env_names_plus_its_run_id() {
    let ws = temp_dir("env");
    let argv_out = ws.path().join("argv.json");
    // IS_SANDBOX is one of claude's own variables.
    let mut cmd = cam_run("claude", ws.path());
    cmd.env("IS_SANDBOX", "1")
        // Passed on by CAM_PASS_ENV: the fake reads it, and it changes its answer.
        .env("FAKE_CLI_DIRECTIVES", "answer=set_in_the_environment")
        .env("CAM_PASS_ENV", "FAKE_CLI_*")
        .arg(format!("argv-out={}", argv_out.display()));
    let out = run(cmd);
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.stdout, "set in the environment\n", "{out:?}");
    let record = recorded(&argv_out);
    assert_eq!(record["env"]["IS_SANDBOX"], "1", "{record}");
    assert!(
        record["env"]["CAM_RUN_ID"]
            .as_str()
            .is_some_and(|id| !id.is_empty()),
        "{record}"
    );
}

// ---------------------------------------------------------------------------------------------
// stdout and stderr

#[test]
fn stdout_carries_only_the_answer_and_stderr_the_events_and_logs() {
    let ws = temp_dir("streams");
    let mut cmd = cam_run("codex", ws.path());
    // Verbose logging, so any log line that went to stdout would show.
    cmd.env("CAM_LOG", "debug")
        .arg("tool reasoning answer=only_this_answer");
    let out = run(cmd);
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.stdout, "only this answer\n", "{out:?}");
    assert!(out.stderr.contains("codex: session "), "{out:?}");
    assert!(
        out.stderr
            .contains("codex: running `/bin/bash -lc 'echo hi'`"),
        "{out:?}"
    );
    assert!(out.stderr.contains("codex: turn completed"), "{out:?}");
    assert!(out.stderr.contains("session: "), "{out:?}");
    assert!(out.stderr.contains("started"), "no log line: {out:?}");
}
