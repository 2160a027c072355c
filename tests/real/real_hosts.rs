//! The product as it is used: a real coding CLI is the MCP host, with our server configured as
//! its MCP server; the host's model (the mock) calls our tool; our server runs another real CLI
//! against the same mock; the inner answer comes back to the host's model and into the host's
//! final answer; an inner CLI's edit in a worktree is reviewed and applied by the host's model.
//! codex hosts claude, claude hosts codex; Claude Code asks our server for its prompts and
//! resources when it connects. A CLI that is not installed skips locally and fails in CI (see
//! tests/real).

use crate::common;
use crate::real;

use cli_agent_engine::{Agent, clis};
use common::unique;
use real::hosted::{World, path};
use real::repo::{ScriptedEdit, changed_lines, make_repo};
use serde_json::{Value, json};

/// Characters of answer a tool result may carry (`CAM_MAX_RESULT_CHARS`, its default).
const BUDGET: usize = 20_000;

/// `host` hosting our server, which runs `inner` with `extra` settings and the default result
/// budget; `None` when either CLI is not installed.
async fn world(host: Agent, inner: Agent, extra: &[(&str, String)]) -> Option<World> {
    let mut settings = vec![("CAM_MAX_RESULT_CHARS", BUDGET.to_string())];
    settings.extend(extra.iter().cloned());
    World::new(host, inner, &settings).await
}

/// The host's final answer in its JSONL: codex's last agent message, claude's result.
fn final_answer(host: Agent, events: &[Value]) -> String {
    let answer = match host.name() {
        "codex" => events
            .iter()
            .rev()
            .find(|event| {
                event["type"] == "item.completed" && event["item"]["type"] == "agent_message"
            })
            .and_then(|event| event["item"]["text"].as_str()),
        _ => events
            .iter()
            .rev()
            .find(|event| event["type"] == "result")
            .and_then(|event| event["result"].as_str()),
    };
    answer
        .unwrap_or_else(|| panic!("{host} printed no final answer: {events:#?}"))
        .to_owned()
}

/// The host script: call our `inner` tool with `arguments`, then (if given) `then` while the
/// result says the job still runs, `$JOB_ID` standing for the job's id.
fn script(inner: Agent, arguments: &Value, then: Option<(&str, Value)>) -> String {
    let mut prompt = format!("CALL_TOOL: {} {arguments}", inner.name());
    if let Some((tool, arguments)) = then {
        prompt.push_str(&format!("\nTHEN_CALL: {tool} {arguments}"));
    }
    prompt
}

/// codex finds our tools with its client-side tool_search: the mock searched, and codex
/// answered with the namespace `mcp__cam` holding the tool.
fn assert_found_by_tool_search(world: &World, tool: &str) {
    if world.host.agent != clis::CODEX {
        return;
    }
    let found = world.host_requests().iter().any(|request| {
        request["body"]["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|item| item["type"] == "tool_search_output")
            .flat_map(|item| item["tools"].as_array().into_iter().flatten())
            .any(|namespace| {
                namespace["name"] == format!("mcp__{}", real::MCP_SERVER)
                    && namespace["tools"]
                        .to_string()
                        .contains(&format!("\"{tool}\""))
            })
    });
    assert!(found, "codex's tool_search never listed {tool}");
}

async fn a_plain_delegation_returns_the_inner_answer_to_the_host(host: Agent, inner: Agent) {
    let Some(world) = world(host, inner, &[]).await else {
        return;
    };
    let marker = unique("inner");
    let prompt = script(inner, &json!({"prompt": format!("ANSWER: {marker}")}), None);

    let events = world.host_turn(&prompt).await;

    let answer = final_answer(host, &events);
    assert!(answer.starts_with("TOOL RESULT: "), "{answer}");
    assert!(answer.contains(&marker), "{answer}");
    assert!(
        !world.mock.requests_with(inner, &marker).is_empty(),
        "the inner {inner} never asked the model: {:#?}",
        world.mock.requests()
    );
    assert_eq!(
        world.host_tool_calls().len(),
        1,
        "{:#?}",
        world.host_tool_calls()
    );
    assert!(
        !world.host_requests_with_result(&marker).is_empty(),
        "no request of the host carried our tool's result: {:#?}",
        world.mock.requests()
    );
    assert_found_by_tool_search(&world, inner.name());
    // What every agent tool shares is said once, in our instructions: the host's model has it.
    let told = world.host_requests().iter().any(|request| {
        request["body"]
            .to_string()
            .contains("every call starts a fresh conversation")
    });
    assert!(told, "{host} never gave its model our instructions");
    world.assert_nothing_left().await;
}

async fn a_long_delegation_is_handed_off_and_collected_with_job_wait(host: Agent, inner: Agent) {
    let Some(world) = world(host, inner, &[]).await else {
        return;
    };
    let marker = unique("inner");
    let arguments = json!({"prompt": format!("SLOW: 6 ANSWER: {marker}"), "handoff_after_secs": 2});
    let wait = json!({"job_ids": ["$JOB_ID"], "timeout_secs": 20});
    let prompt = script(inner, &arguments, Some(("job_wait", wait)));

    let events = world.host_turn(&prompt).await;

    let answer = final_answer(host, &events);
    assert!(answer.contains(&marker), "{answer}");
    let calls = world.host_tool_calls();
    assert!(
        calls.len() >= 2,
        "no job_wait after the hand-off: {calls:#?}"
    );
    let handed_off = world
        .host_requests()
        .into_iter()
        .find_map(|request| request["tool_output"].as_str().map(str::to_owned))
        .expect("the host passed on our first result");
    assert!(
        handed_off.contains("\"status\":\"running\"") && !handed_off.contains(&marker),
        "the first result was not a hand-off: {handed_off}"
    );
    let job_id = calls[1]["arguments"]["job_ids"][0]
        .as_str()
        .expect("job_wait names a job");
    assert!(
        job_id.starts_with("job_") && handed_off.contains(job_id),
        "{calls:#?}"
    );
    assert!(
        calls[1..].iter().all(|call| call["tool"] == "job_wait"),
        "{calls:#?}"
    );
    assert_found_by_tool_search(&world, "job_wait");
    world.assert_nothing_left().await;
}

/// The inner CLI is codex for both hosts: claude 2.1.197 exited before a pipe had taken all of
/// a 1 MiB stream-json line (its last lines came out cut; 2.1.332 printed them whole in 3 tries
/// behind a slow reader), which is not what this proves.
async fn a_huge_answer_reaches_the_host_within_the_budget(host: Agent) {
    let inner = clis::CODEX;
    let Some(world) = world(host, inner, &[]).await else {
        return;
    };
    const HUGE: usize = 1 << 20;
    let marker = unique("big");
    let inner_prompt = format!("LONG: {HUGE} ANSWER: {marker}");
    let prompt = script(inner, &json!({ "prompt": inner_prompt }), None);

    let events = world.host_turn(&prompt).await;

    let answer = final_answer(host, &events);
    assert!(answer.contains("job_result"), "{answer}");
    let results = world.host_requests_with_result(&marker);
    let result = results
        .first()
        .and_then(|request| request["tool_output"].as_str())
        .expect("the host passed on our result");
    assert!(
        result.len() < BUDGET + 2_000,
        "{} characters of result reached the host's model",
        result.len()
    );
    assert!(
        result.contains(&format!("\"answer_chars\":{HUGE}")) && result.contains("job_result"),
        "the result neither says how long the answer is nor how to page it: {result}"
    );
    world.assert_nothing_left().await;
}

/// The host's model has our server run the inner CLI in a worktree, where the inner CLI's shell
/// tool edits a tracked file; then reviews the job with `job_diff` and brings its edit into the
/// host's workspace with `job_apply`.
async fn an_isolated_edit_is_reviewed_and_applied_by_the_host(host: Agent, inner: Agent) {
    let Some(world) = world(host, inner, &[]).await else {
        return;
    };
    let workspace = &world.host.workspace;
    make_repo(workspace);
    let edit = ScriptedEdit::by_shell(inner);
    let arguments = json!({
        "prompt": edit.prompt,
        "permission": "workspace-write",
        "isolation": "worktree",
        "workspace": path(workspace),
    });
    let job = json!({"job_id": "$JOB_ID"});
    let prompt = format!(
        "{}\nNEXT_CALL: job_diff {job}\nNEXT_CALL: job_apply {job}",
        script(inner, &arguments, None)
    );

    let events = world.host_turn(&prompt).await;

    let tools: Vec<Value> = world
        .host_tool_calls()
        .iter()
        .map(|call| call["tool"].clone())
        .collect();
    assert_eq!(
        tools,
        [inner.name(), "job_diff", "job_apply"],
        "{events:#?}"
    );
    assert_reviewed_and_applied(&world.host_results(), &edit);
    assert!(final_answer(host, &events).contains("\"written\":true"));
    let content = edit.content_in(workspace);
    assert_eq!(
        content,
        Some(edit.after),
        "job_apply did not bring the edit in"
    );
    world.assert_nothing_left().await;
}

/// The host's model saw the run's `changes`, then `job_diff`'s diff, then `job_apply`'s result,
/// each showing exactly `edit`.
fn assert_reviewed_and_applied(results: &[Value], edit: &ScriptedEdit) {
    let [report, diff, applied] = results else {
        panic!(
            "the host's model saw {} results: {results:#?}",
            results.len()
        );
    };
    let changes = &report["changes"];
    assert_eq!(changes["isolation"], "worktree", "{report:#}");
    assert_eq!(changes["files"], edit.file_change(), "{report:#}");
    let diff = diff["diff"].as_str().unwrap_or_default();
    assert_eq!(changed_lines(diff), edit.diff_lines(), "{diff}");
    assert_eq!(applied["written"], true, "{applied:#}");
}

/// Claude Code, hosting our server headless, asks it for its prompts (its slash commands) and
/// its resources at connect time (tools/list, prompts/list, resources/list; not the templates),
/// and gets ours: rmcp's debug log of our server (in a file) records each request and the
/// result it answered. A first turn runs a job, so the second turn's server lists it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_as_host_lists_our_prompts_and_resources() {
    let log = common::temp_dir("host-server-log");
    let log_file = log.path().join("server.log");
    let extra = [
        ("CAM_LOG", "info,rmcp=debug".to_owned()),
        ("CAM_LOG_FILE", path(&log_file)),
    ];
    let Some(world) = world(clis::CLAUDE, clis::CODEX, &extra).await else {
        return;
    };
    let marker = unique("hosted");
    let delegate = script(
        clis::CODEX,
        &json!({"prompt": format!("ANSWER: {marker}")}),
        None,
    );
    let events = world.host_turn(&delegate).await;
    assert!(final_answer(clis::CLAUDE, &events).contains(&marker));
    world.host_turn("ANSWER: listed").await;

    let log = std::fs::read_to_string(&log_file).expect("our server's log");
    for (request, result, ours) in [
        ("ListPromptsRequest", "ListPromptsResult", "second_opinion"),
        ("ListResourcesRequest", "ListResourcesResult", "job://job_"),
    ] {
        assert!(
            log.lines()
                .any(|line| line.contains("received request") && line.contains(request)),
            "claude never sent {request}:\n{log}"
        );
        assert!(
            log.lines().any(|line| line.contains("response message")
                && line.contains(result)
                && line.contains(ours)),
            "no {result} with {ours:?} went back:\n{log}"
        );
    }
    world.assert_nothing_left().await;
}

/// Each scenario with `$host` as the host CLI and `$inner` as the CLI our server runs for it.
macro_rules! hosted {
    ($module:ident: $host:ident hosts $inner:ident) => {
        mod $module {
            use cli_agent_engine::clis::{$host, $inner};

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_plain_delegation_returns_the_inner_answer_to_the_host() {
                super::a_plain_delegation_returns_the_inner_answer_to_the_host($host, $inner).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_huge_answer_reaches_the_host_within_the_budget() {
                super::a_huge_answer_reaches_the_host_within_the_budget($host).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_long_delegation_is_handed_off_and_collected_with_job_wait() {
                super::a_long_delegation_is_handed_off_and_collected_with_job_wait($host, $inner)
                    .await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn an_isolated_edit_is_reviewed_and_applied_by_the_host() {
                super::an_isolated_edit_is_reviewed_and_applied_by_the_host($host, $inner).await;
            }
        }
    };
}

hosted!(codex: CODEX hosts CLAUDE);
hosted!(claude: CLAUDE hosts CODEX);
