//! What the person who runs the server bounds, end to end through the built binary and the fake
//! CLI: the directories MCP calls may use (allowed roots), the most they may ask for (the
//! permission ceiling), the environment each CLI gets, and the secrets masked in everything
//! that leaves (results, progress, logs).

use crate::common;
use crate::mcp;
use crate::web;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use cli_agent_engine::{Agent, clis};
use common::cli_fixtures::fixture;
use common::{fake_bin, temp_dir, wait_until};
use mcp::{Server, all_text, is_error, structured};
use serde_json::{Value, json};
use web::Dashboard;

fn assert_completed(result: &Value) {
    assert!(!is_error(result), "{result:#}");
    assert_eq!(structured(result)["status"], "completed", "{result:#}");
}

fn canonical(path: &Path) -> String {
    std::fs::canonicalize(path)
        .expect("canonicalize")
        .display()
        .to_string()
}

/// A call of the codex fake in `workspace` (if given) that records what it saw in `record`.
// The servers here run unconfined (`CAM_SANDBOX=off`): the fake CLI records its argv and
// environment outside the workspace, a test instrument the sandbox would refuse.
fn recording_call(record: &Path, workspace: Option<&Path>, permission: &str) -> Value {
    let mut arguments = json!({
        "prompt": format!("argv-out={}", record.display()),
        "permission": permission,
    });
    if let Some(workspace) = workspace {
        arguments["workspace"] = json!(workspace);
    }
    arguments
}

fn recorded(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("the fake recorded its call"))
        .expect("argv-out is JSON")
}

// ---------------------------------------------------------------------------------------------
// Allowed roots

// A symlink out of the root (links need Developer Mode on Windows).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_outside_the_allowed_roots_is_refused_naming_path_roots_and_setting() {
    let (root, outside) = (temp_dir("root"), temp_dir("outside"));
    let escape = root.path().join("escape");
    std::os::unix::fs::symlink(outside.path(), &escape).expect("symlink");
    let record = root.path().join("argv.json");
    let mut server = Server::builder()
        .env("CAM_SANDBOX", "off")
        .env("CAM_ALLOWED_ROOTS", root.path())
        .spawn();
    server.initialize().await;

    for workspace in [outside.path(), escape.as_path(), Path::new("/")] {
        let result = server
            .call(
                "codex",
                recording_call(&record, Some(workspace), "read-only"),
            )
            .await;
        assert!(is_error(&result), "{workspace:?}: {result:#}");
        let text = all_text(&result);
        assert!(
            text.contains(&workspace.display().to_string())
                && text.contains(&canonical(root.path()))
                && text.contains("CAM_ALLOWED_ROOTS"),
            "{text}"
        );
    }
    assert!(!record.exists(), "a refused call started its CLI");

    let inside = root.path().join("project");
    std::fs::create_dir(&inside).expect("mkdir");
    let result = server
        .call("codex", recording_call(&record, Some(&inside), "read-only"))
        .await;
    assert_completed(&result);
    assert_eq!(recorded(&record)["cwd"], canonical(&inside));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_calls_may_use_the_servers_directory_and_home_and_nothing_else() {
    let (home, cwd, elsewhere) = (temp_dir("home"), temp_dir("cwd"), temp_dir("elsewhere"));
    let record = elsewhere.path().join("argv.json");
    let mut server = Server::builder()
        .env("CAM_SANDBOX", "off")
        .env_remove("CAM_ALLOWED_ROOTS")
        .env("HOME", home.path())
        .cwd(cwd.path())
        .spawn();
    server.initialize().await;

    for (workspace, expected) in [(None, cwd.path()), (Some(home.path()), home.path())] {
        let result = server
            .call("codex", recording_call(&record, workspace, "read-only"))
            .await;
        assert_completed(&result);
        assert_eq!(recorded(&record)["cwd"], canonical(expected));
    }

    let refused = server
        .call(
            "codex",
            recording_call(&record, Some(elsewhere.path()), "read-only"),
        )
        .await;
    assert!(is_error(&refused), "{refused:#}");
    let text = all_text(&refused);
    assert!(
        text.contains("the default: the server's directory and home")
            && text.contains(&canonical(home.path()))
            && text.contains(&canonical(cwd.path())),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_or_a_missing_directory_as_a_root_stops_the_server_at_start() {
    // A dir's parent that is the root: a drive's on Windows.
    let up_to_root = if cfg!(windows) {
        format!("{}\\..", std::env::var("SystemRoot").expect("SystemRoot"))
    } else {
        "/tmp/..".to_owned()
    };
    for (roots, expected) in [
        ("/", "`/` cannot be an allowed root"),
        (up_to_root.as_str(), "`/` cannot be an allowed root"),
        ("/no/such/root", "allowed root /no/such/root cannot be used"),
    ] {
        let mut server = Server::builder().env("CAM_ALLOWED_ROOTS", roots).spawn();
        let status = server.wait_exit(mcp::DEADLINE).await;
        assert_eq!(status.code(), Some(2), "{roots}: {}", server.stderr());
        // stderr is read by a task of its own, which may lag behind the exit.
        wait_until(&format!("the server says {expected}"), || {
            server.stderr().contains(expected)
        })
        .await;
    }
}

// ---------------------------------------------------------------------------------------------
// The permission ceiling

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_above_the_permission_ceiling_is_refused_naming_the_setting() {
    let dir = temp_dir("ceiling");
    let record = dir.path().join("argv.json");
    let cases = [
        (None, "unlimited", false),
        (None, "workspace-write", true),
        (Some("read-only"), "workspace-write", false),
        (Some("read-only"), "read-only", true),
        (Some("unlimited"), "unlimited", true),
    ];
    for (ceiling, asked, allowed) in cases {
        let mut builder = Server::builder().env("CAM_SANDBOX", "off");
        if let Some(ceiling) = ceiling {
            builder = builder.env("CAM_MAX_PERMISSION", ceiling);
        }
        let mut server = builder.spawn();
        server.initialize().await;
        let _ = std::fs::remove_file(&record);
        let result = server
            .call("codex", recording_call(&record, Some(dir.path()), asked))
            .await;
        if allowed {
            assert_completed(&result);
            continue;
        }
        let text = all_text(&result);
        assert!(is_error(&result), "{ceiling:?} {asked}: {result:#}");
        assert!(
            text.contains(&format!("permission {asked} is above"))
                && text.contains("CAM_MAX_PERMISSION"),
            "{text}"
        );
        assert!(!record.exists(), "a refused call started its CLI");
    }
}

#[test]
fn run_is_bound_by_neither_the_roots_nor_the_ceiling() {
    let (root, outside) = (temp_dir("run-root"), temp_dir("run-outside"));
    let output = common::cam_command()
        .env("CAM_CODEX_BIN", fake_bin(clis::CODEX))
        .env("CAM_STATE_DIR", root.path().join("state"))
        .env("CAM_ALLOWED_ROOTS", root.path())
        .env("CAM_MAX_PERMISSION", "read-only")
        .args([
            "run",
            "codex",
            "answer=ran_anyway",
            "--permission",
            "unlimited",
        ])
        .arg("--workspace")
        .arg(outside.path())
        .stdin(Stdio::null())
        .output()
        .expect("run cli-agent-mcp");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ran anyway\n");
}

// ---------------------------------------------------------------------------------------------
// Asking the person to lift a bound for one call (MCP elicitation)

const ELICIT: &str = "elicitation/create";

/// A server bounded to `root` at workspace-write, and a client that can be asked (or not).
async fn asking_server(root: &Path, can_be_asked: bool, env: &[(&str, &str)]) -> Server {
    let mut builder = Server::builder()
        .env("CAM_SANDBOX", "off")
        .env("CAM_ALLOWED_ROOTS", root)
        .env("CAM_MAX_PERMISSION", "workspace-write");
    for (key, value) in env {
        builder = builder.env(key, value);
    }
    let mut server = builder.spawn();
    let capabilities = if can_be_asked {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    server
        .initialize_declaring(mcp::LEGACY_VERSION, capabilities)
        .await;
    server
}

/// Call codex past a bound, answer the question it raises with `answer`, and return the
/// question and the call's result.
async fn call_answering(server: &mut Server, arguments: Value, answer: Value) -> (Value, Value) {
    let answered: Vec<Value> = server
        .messages()
        .iter()
        .filter(|m| m["method"] == ELICIT)
        .map(|m| m["id"].clone())
        .collect();
    let call = server.start_call("codex", arguments, None).await;
    let question = server.server_request(ELICIT, &answered).await;
    server.respond(&question["id"], answer).await;
    (question, server.result(call).await)
}

fn elicitations(server: &Server) -> usize {
    let messages = server.messages();
    messages.iter().filter(|m| m["method"] == ELICIT).count()
}

pub(super) fn assert_refused_above_ceiling(result: &Value, record: &Path) {
    let text = all_text(result);
    assert!(is_error(result), "{result:#}");
    assert!(
        text.contains("permission unlimited is above") && text.contains("CAM_MAX_PERMISSION"),
        "the refusal is today's: {text}"
    );
    assert!(!record.exists(), "a refused call started its CLI");
}

/// `jobs show --json` of job `id` in the store in `state`.
fn shown_job(state: &Path, id: &str) -> Value {
    common::shown_job(state, id).unwrap_or_else(|| panic!("jobs show printed no job {id}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_above_the_ceiling_runs_at_the_asked_level_when_the_person_allows_it() {
    let (dir, state) = (temp_dir("ask-allow"), temp_dir("ask-allow-state"));
    let record = dir.path().join("argv.json");
    let state_dir = state.path().display().to_string();
    let env = [("CAM_STATE_DIR", state_dir.as_str())];
    let mut server = asking_server(dir.path(), true, &env).await;
    let arguments = recording_call(&record, Some(dir.path()), "unlimited");
    let allow = json!({"action": "accept", "content": {"allow": true}});
    let (question, result) = call_answering(&mut server, arguments, allow).await;

    let params = &question["params"];
    let message = params["message"].as_str().unwrap_or_default();
    for expected in ["codex", "unlimited", "workspace-write", "argv-out="] {
        assert!(message.contains(expected), "{expected} in {message}");
    }
    assert_eq!(
        params["requestedSchema"]["properties"]["allow"]["type"], "boolean",
        "{question:#}"
    );
    assert_completed(&result);
    let argv = recorded(&record)["argv"].to_string();
    assert!(
        argv.contains("danger-full-access"),
        "ran at unlimited: {argv}"
    );
    let id = structured(&result)["job_id"].as_str().expect("job_id");
    let job = shown_job(state.path(), id);
    let allowed = job["allowed_past"].as_str().unwrap_or_default();
    assert!(
        allowed.contains("permission unlimited"),
        "the job records it: {job:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decline_a_cancel_or_an_answer_without_allow_true_refuses_as_before() {
    let dir = temp_dir("ask-deny");
    let record = dir.path().join("argv.json");
    let mut server = asking_server(dir.path(), true, &[]).await;
    let answers = [
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
        json!({"action": "accept", "content": {"allow": false}}),
        json!({"action": "accept", "content": {"allow": "yes"}}),
        json!({"action": "accept", "content": {"permit": true}}),
        json!({"action": "accept"}),
    ];
    for answer in answers {
        let arguments = recording_call(&record, Some(dir.path()), "unlimited");
        let (_, result) = call_answering(&mut server, arguments, answer).await;
        assert_refused_above_ceiling(&result, &record);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_outside_the_roots_is_used_only_when_the_person_allows_it() {
    let (root, outside) = (temp_dir("ask-root"), temp_dir("ask-outside"));
    let record = root.path().join("argv.json");
    let mut server = asking_server(root.path(), true, &[]).await;
    let arguments = || recording_call(&record, Some(outside.path()), "read-only");

    let decline = json!({"action": "decline"});
    let (question, refused) = call_answering(&mut server, arguments(), decline).await;
    let message = question["params"]["message"].to_string();
    assert!(message.contains(&canonical(outside.path())), "{message}");
    assert!(is_error(&refused), "{refused:#}");
    let text = all_text(&refused);
    assert!(
        text.contains(&outside.path().display().to_string()) && text.contains("CAM_ALLOWED_ROOTS"),
        "the refusal is today's: {text}"
    );
    assert!(!record.exists(), "a refused call started its CLI");

    let allow = json!({"action": "accept", "content": {"allow": true}});
    let (_, result) = call_answering(&mut server, arguments(), allow).await;
    assert_completed(&result);
    assert_eq!(recorded(&record)["cwd"], canonical(outside.path()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_left_unanswered_refuses_when_its_time_runs_out() {
    let dir = temp_dir("ask-timeout");
    let record = dir.path().join("argv.json");
    let mut server = asking_server(dir.path(), true, &[("CAM_ASK_TIMEOUT_SECS", "1")]).await;
    let arguments = recording_call(&record, Some(dir.path()), "unlimited");
    let call = server.start_call("codex", arguments, None).await;
    server.server_request(ELICIT, &[]).await;
    let result = server.result(call).await;
    assert_refused_above_ceiling(&result, &record);
    assert!(
        server.stderr().contains("did not answer within"),
        "{}",
        server.stderr()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nobody_is_asked_by_a_client_that_cannot_be_under_refuse_or_for_slash() {
    let dir = temp_dir("ask-never");
    let record = dir.path().join("argv.json");
    let above = recording_call(&record, Some(dir.path()), "unlimited");
    let cases = [
        (false, "ask", above.clone()),
        (true, "refuse", above),
        (
            true,
            "ask",
            recording_call(&record, Some(Path::new("/")), "read-only"),
        ),
    ];
    for (can_be_asked, mode, arguments) in cases {
        let env = [("CAM_ASK_BEYOND_BOUNDS", mode)];
        let mut server = asking_server(dir.path(), can_be_asked, &env).await;
        let result = server.call("codex", arguments.clone()).await;
        assert!(is_error(&result), "{mode}: {result:#}");
        assert_eq!(
            elicitations(&server),
            0,
            "{mode} {can_be_asked}: nobody is asked"
        );
        assert!(!record.exists(), "a refused call started its CLI");
    }
}

/// `job_wait` on job `id`: its report.
async fn waited(server: &mut Server, id: &str) -> Value {
    let arguments = json!({"job_ids": [id], "timeout_secs": 600});
    let result = server.call("job_wait", arguments).await;
    structured(&result)["jobs"][0].clone()
}

/// Call codex at `unlimited` (above the ceiling) from a client that cannot be asked: the
/// call hands off at once, its job waiting on the person for the bounds, its CLI not started.
async fn parked_call(server: &mut Server, dir: &Path, record: &Path) -> String {
    let arguments = recording_call(record, Some(dir), "unlimited");
    let result = server.call("codex", arguments).await;
    assert!(!is_error(&result), "{result:#}");
    let report = structured(&result);
    assert_eq!(report["status"], "needs_input", "{result:#}");
    let asked = report["waiting_for"].as_str().unwrap_or_default();
    for expected in ["permission unlimited", "workspace-write", "no elicitation"] {
        assert!(asked.contains(expected), "{expected:?} in {asked}");
    }
    assert!(
        !record.exists(),
        "the CLI started before the person allowed it"
    );
    report["job_id"].as_str().expect("job_id").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_park_questions_a_call_past_the_bounds_waits_for_the_person_on_the_dashboard() {
    let (dir, state) = (temp_dir("park-bounds"), temp_dir("park-bounds-state"));
    let state_dir = state.path().display().to_string();
    let env = [
        ("CAM_STATE_DIR", state_dir.as_str()),
        ("CAM_PARK_QUESTIONS", "1"),
    ];
    let mut server = asking_server(dir.path(), false, &env).await;
    let dashboard = Dashboard::start(state.path()).await;
    let cookie = dashboard.log_in().await;

    let record = dir.path().join("allowed.json");
    let id = parked_call(&mut server, dir.path(), &record).await;
    let shown = shown_job(state.path(), &id);
    assert_eq!(shown["status"], "needs_input", "{shown:#}");
    assert_eq!(shown["waiting_for"]["number"], 1, "{shown:#}");
    let path = format!("/jobs/{id}/questions/1/allow");
    let answered = dashboard.post_from_page(&cookie, &id, &path).await;
    assert_eq!(answered.json()["result"], "answered", "{answered:?}");
    assert_eq!(waited(&mut server, &id).await["status"], "completed");
    let argv = recorded(&record)["argv"].to_string();
    assert!(
        argv.contains("danger-full-access"),
        "ran at unlimited: {argv}"
    );
    let job = shown_job(state.path(), &id);
    let allowed = job["allowed_past"].as_str().unwrap_or_default();
    assert!(allowed.contains("permission unlimited"), "{job:#}");
    let page = json!({"job_id": id, "transcript": true, "limit": 1});
    let first = server.call("job_result", page).await;
    let first = structured(&first)["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let question: Value = serde_json::from_str(first.trim()).expect("a JSON line");
    assert_eq!(question["about"], "server_bounds", "{question:#}");
    assert_eq!(
        (&question["answer"], &question["answered_by"]),
        (&json!("allowed"), &json!("the dashboard"))
    );

    let record = dir.path().join("declined.json");
    let id = parked_call(&mut server, dir.path(), &record).await;
    let path = format!("/jobs/{id}/questions/1/decline");
    dashboard.post_from_page(&cookie, &id, &path).await;
    let report = waited(&mut server, &id).await;
    assert_eq!(report["status"], "failed", "{report:#}");
    assert_eq!(report["error"]["kind"], "refused", "{report:#}");
    let message = report["error"]["message"].as_str().unwrap_or_default();
    for expected in ["CAM_MAX_PERMISSION", "the person declined on the dashboard"] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }
    assert!(!record.exists(), "a declined call started its CLI");
}

// ---------------------------------------------------------------------------------------------
// The environment each CLI gets

/// Variables of the server besides each CLI's own: proxy and locale settings every CLI
/// gets, a passed one, and another tool's secret that none gets.
const BASE_SERVER_ENV: &[(&str, &str)] = &[
    ("HTTPS_PROXY", "http://proxy.invalid:3128"),
    ("SSL_CERT_FILE", "/etc/ssl/certs/corporate.pem"),
    ("LC_ALL", "C.UTF-8"),
    ("MY_PASSED_VAR", "passed"),
    ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
];

/// Every variable of the server: the base ones and each CLI's own, from its fixture
/// (`tests/fixtures/clis/<cli>/cli.toml`, `[policy] server_env`).
fn server_env() -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = BASE_SERVER_ENV
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    for agent in clis::builtin_agents() {
        env.extend(fixture(agent).policy.server_env);
    }
    env
}

/// What each CLI must receive of [`server_env`] (its fixture's `[policy] receives`); the rest
/// must not reach it.
fn expected_env(agent: Agent) -> Vec<String> {
    let mut names: Vec<String> = ["HTTPS_PROXY", "SSL_CERT_FILE", "LC_ALL", "MY_PASSED_VAR"]
        .map(str::to_owned)
        .to_vec();
    names.extend(fixture(agent).policy.receives);
    names
}

fn assert_clean_env(agent: Agent, env: &Value) {
    let expected = expected_env(agent);
    for (name, value) in server_env() {
        if expected.contains(&name) {
            assert_eq!(env[&name], *value, "{agent} did not get {name}: {env:#}");
        } else {
            assert!(env.get(&name).is_none(), "{agent} got {name}: {env:#}");
        }
    }
    for name in ["PATH", "HOME", "CAM_RUN_ID"] {
        assert!(env.get(name).is_some(), "{agent} lacks {name}: {env:#}");
    }
    let server_settings: Vec<_> = env
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, _)| name)
        .filter(|name| name.starts_with("CAM_") && *name != "CAM_RUN_ID")
        .collect();
    assert!(
        server_settings.is_empty(),
        "{agent} got {server_settings:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_cli_gets_the_base_set_its_own_variables_and_what_cam_pass_env_names_only() {
    let dir = temp_dir("env");
    let mut builder = Server::builder()
        .env("CAM_SANDBOX", "off")
        .env("CAM_PASS_ENV", "FAKE_CLI_*,MY_PASSED_VAR");
    for (name, value) in server_env() {
        builder = builder.env(&name, value);
    }
    let mut server = builder.spawn();
    server.initialize().await;
    for agent in clis::builtin_agents() {
        let record = dir.path().join(format!("{agent}.json"));
        let result = server
            .call(
                agent.name(),
                recording_call(&record, Some(dir.path()), "read-only"),
            )
            .await;
        assert_completed(&result);
        assert_clean_env(agent, &recorded(&record)["env"]);
    }
}

#[test]
fn run_gives_the_cli_the_same_clean_environment() {
    let dir = temp_dir("run-env");
    let record = dir.path().join("argv.json");
    let mut command = common::cam_command();
    command.env("CAM_SANDBOX", "off");
    command
        .env("CAM_GEMINI_BIN", fake_bin(clis::GEMINI))
        .env("CAM_STATE_DIR", dir.path().join("state"))
        .env("CAM_PASS_ENV", "MY_PASSED_VAR")
        .envs(server_env())
        .args(["run", "gemini", &format!("argv-out={}", record.display())])
        .arg("--workspace")
        .arg(dir.path())
        .stdin(Stdio::null());
    let output = command.output().expect("run cli-agent-mcp");
    assert!(output.status.success(), "{output:?}");
    assert_clean_env(clis::GEMINI, &recorded(&record)["env"]);
}

// ---------------------------------------------------------------------------------------------
// Redaction

/// A key of Anthropic's shape and one of OpenAI's, with no `_` (the fake reads `_` as a space).
const ANTHROPIC_KEY: &str = "sk-ant-api03-Q9wErTy7uIoP3aSdFgH5jKlZ2xCvBnM8qWeRtY4uIoPa";
const OPENAI_KEY: &str = "sk-proj-Zx8Cv7Bn6Mq5We4Rt3Yu2Io1PaSdFgHjKlQwErTy";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_a_cli_prints_reaches_neither_the_result_nor_progress_nor_the_log() {
    let mut server = Server::builder()
        // rmcp logs every message it receives at debug, prompts included.
        .env("CAM_LOG", "debug")
        .env("CAM_PROGRESS_HEARTBEAT_SECS", "1")
        .spawn();
    server.initialize().await;

    // A crash whose stderr holds the key: the stderr tail is quoted in the result.
    let crashed = server
        .call(
            "gemini",
            json!({"prompt": format!("crash=auth_failed_for_{ANTHROPIC_KEY}")}),
        )
        .await;
    assert_eq!(
        structured(&crashed)["error"]["kind"],
        "crashed",
        "{crashed:#}"
    );
    assert!(
        structured(&crashed)["stderr_tail"]
            .as_str()
            .is_some_and(|tail| tail.contains("sk-ant-api03-Q9wE…[redacted]")),
        "{crashed:#}"
    );

    // A failure whose message holds the key, lingering so progress reports it.
    let prompt = format!("fail=the_key_{OPENAI_KEY}_was_rejected linger=4");
    let id = server
        .start_call("codex", json!({"prompt": prompt}), Some("key"))
        .await;
    let failed = server.result(id).await;
    assert_eq!(structured(&failed)["status"], "failed", "{failed:#}");
    assert!(
        all_text(&failed).contains("sk-proj-Zx8C…[redacted]"),
        "{failed:#}"
    );
    let progress: Vec<String> = server
        .progress("key")
        .iter()
        .filter_map(|params| params["message"].as_str().map(str::to_owned))
        .collect();
    assert!(
        progress.iter().any(|line| line.contains("[redacted]")),
        "no progress line reported the failure: {progress:?}"
    );

    server.ping().await;
    // The log saw the keys (rmcp logs each request): otherwise this would prove nothing.
    wait_until("the log shows a masked key", || {
        server.stderr().contains("…[redacted]")
    })
    .await;
    let everything = format!("{:?}\n{}", server.messages(), server.stderr());
    for key in [ANTHROPIC_KEY, OPENAI_KEY] {
        let secret = &key[key.len() - 30..];
        assert!(!everything.contains(secret), "{key} leaked:\n{everything}");
    }
}
