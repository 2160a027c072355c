//! Jobs as MCP resources, the prompts and completion, end to end through the real binary over
//! stdio against the fake CLIs: listing and reading each template, not-found errors, a large
//! answer cut at the budget, subscriptions told when a job ends, list_changed on a new job,
//! the prompts rendered with their arguments, completion of agents and job ids.

use crate::common;
use crate::mcp;

use mcp::{Server, job_id};
use serde_json::{Value, json};

/// The result of `method`; panics on an error.
async fn ask(server: &mut Server, method: &str, params: Value) -> Value {
    let id = server.request(method, params).await;
    server.result(id).await
}

/// The error of `method`; panics on a result.
async fn refused(server: &mut Server, method: &str, params: Value) -> Value {
    let id = server.request(method, params).await;
    let response = server.response(id).await;
    response
        .get("error")
        .cloned()
        .unwrap_or_else(|| panic!("{method} succeeded: {response:#}"))
}

/// The one text of a read.
async fn read(server: &mut Server, uri: &str) -> (String, String) {
    let read = ask(server, "resources/read", json!({ "uri": uri })).await;
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], uri, "{read:#}");
    (
        contents["text"].as_str().expect("text").to_owned(),
        contents["mimeType"].as_str().expect("mimeType").to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capabilities_name_resources_prompts_and_completions() {
    let mut server = Server::builder().spawn();
    let result = server.initialize().await;
    let capabilities = &result["capabilities"];
    assert_eq!(capabilities["resources"]["subscribe"], true, "{result:#}");
    assert_eq!(capabilities["resources"]["listChanged"], true, "{result:#}");
    assert!(capabilities["prompts"].is_object(), "{result:#}");
    assert!(capabilities["completions"].is_object(), "{result:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_job_is_listed_and_each_of_its_documents_reads() {
    let mut server = Server::start().await;
    let done = server
        .call("codex", json!({"prompt": "answer=the_answer"}))
        .await;
    let id = job_id(&done);

    let listed = ask(&mut server, "resources/list", json!({})).await;
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|resource| resource["uri"].as_str())
        .collect();
    let (summary_uri, answer_uri) = (format!("job://{id}"), format!("job://{id}/answer"));
    assert!(uris.contains(&summary_uri.as_str()), "{listed:#}");
    assert!(uris.contains(&answer_uri.as_str()), "{listed:#}");
    assert!(listed.get("nextCursor").is_none(), "one page: {listed:#}");
    let bad = refused(&mut server, "resources/list", json!({"cursor": "nope"})).await;
    assert_eq!(bad["code"], -32602, "{bad:#}");

    let templates = ask(&mut server, "resources/templates/list", json!({})).await;
    let templates: Vec<&str> = templates["resourceTemplates"]
        .as_array()
        .expect("templates")
        .iter()
        .filter_map(|template| template["uriTemplate"].as_str())
        .collect();
    assert_eq!(
        templates,
        [
            "job://{job_id}",
            "job://{job_id}/answer",
            "job://{job_id}/transcript",
            "job://{job_id}/diff",
            "models://{agent}"
        ]
    );

    let (summary, mime) = read(&mut server, &summary_uri).await;
    assert_eq!(mime, "application/json");
    let summary: Value = serde_json::from_str(&summary).expect("summary is JSON");
    assert_eq!(summary["job_id"], id.as_str());
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["answer"], "the answer");

    let (answer, _) = read(&mut server, &answer_uri).await;
    assert_eq!(answer, "the answer");

    let (transcript, mime) = read(&mut server, &format!("job://{id}/transcript")).await;
    assert_eq!(mime, "application/jsonl");
    assert!(!transcript.is_empty());
    for line in transcript.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|_| panic!("not JSON: {line}"));
    }
}

/// Jobs listed by `resources/list` a page (its size in src/mcp/resources.rs).
const LIST_PAGE: usize = 50;

/// Past the first page: `nextCursor` is followed to the end and every job is listed once. The
/// jobs come from the light stand-in (tests/fixtures/quick-cli), all started at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_list_pages_by_cursor_through_every_job_once() {
    let jobs = LIST_PAGE + 3;
    let quick =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quick-cli/codex");
    let mut server = Server::builder()
        .env("CAM_CODEX_BIN", quick)
        .env("CAM_MAX_RUNS", jobs.to_string())
        .spawn();
    server.initialize().await;
    let mut calls = Vec::with_capacity(jobs);
    for n in 0..jobs {
        let prompt = format!("answer=job-{n}");
        calls.push(
            server
                .start_call("codex", json!({"prompt": prompt}), None)
                .await,
        );
    }
    let mut expected = Vec::with_capacity(jobs);
    for call in calls {
        expected.push(job_id(&server.result(call).await));
    }

    let mut listed = Vec::new();
    let mut pages = 0;
    let mut cursor = None;
    loop {
        let params = cursor.map_or(json!({}), |cursor| json!({ "cursor": cursor }));
        let page = ask(&mut server, "resources/list", params).await;
        pages += 1;
        listed.extend(
            page["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .filter_map(|resource| resource["uri"].as_str()?.strip_prefix("job://"))
                .filter(|rest| !rest.contains('/'))
                .map(str::to_owned),
        );
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 2, "{jobs} jobs at {LIST_PAGE} a page");
    let mut once = listed.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), listed.len(), "a job listed twice: {listed:?}");
    expected.sort();
    assert_eq!(once, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_job_or_uri_is_resource_not_found_with_the_uri() {
    let mut server = Server::start().await;
    let done = server.call("codex", json!({"prompt": "answer=x"})).await;
    let no_diff = format!("job://{}/diff", job_id(&done));
    for uri in [
        "job://job_aaaaaaaaaaaaaaaa",
        "job://not-an-id/answer",
        "file:///etc/passwd",
        no_diff.as_str(),
    ] {
        let error = refused(&mut server, "resources/read", json!({ "uri": uri })).await;
        assert_eq!(error["code"], -32002, "{uri}: {error:#}");
        assert_eq!(error["data"]["uri"], uri, "{error:#}");
        let message = error["message"].as_str().expect("message");
        assert!(
            message.contains("job_list") || message.contains("read job://"),
            "the message names the fix: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_answer_is_cut_at_the_budget_and_names_job_result_for_the_rest() {
    let mut server = Server::builder()
        .env("CAM_MAX_RESULT_CHARS", "1000")
        .spawn();
    server.initialize().await;
    let done = server
        .call("codex", json!({"prompt": "answer-bytes=5000"}))
        .await;
    let id = job_id(&done);
    let (answer, _) = read(&mut server, &format!("job://{id}/answer")).await;
    assert!(answer.starts_with(&"x".repeat(1000)), "{answer}");
    assert!(answer.chars().count() < 1300, "{answer}");
    let call = format!("job_result {{\"job_id\": \"{id}\", \"offset\": 1000}}");
    assert!(answer.contains(&call), "{answer}");
    assert!(answer.contains("of 5000"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_hears_a_new_job_and_the_end_of_its_subscribed_job() {
    let mut server = Server::start().await;
    let started = server
        .call(
            "codex",
            json!({"prompt": format!("hang tag={}", common::unique("res")), "background": true}),
        )
        .await;
    let id = job_id(&started);
    server
        .wait_for("notifications/resources/list_changed", |messages| {
            messages
                .iter()
                .find(|m| m["method"] == "notifications/resources/list_changed")
                .cloned()
        })
        .await;
    let uri = format!("job://{id}");
    ask(&mut server, "resources/subscribe", json!({ "uri": &uri })).await;
    let cancelled = server.call("job_cancel", json!({"job_id": &id})).await;
    assert!(!mcp::is_error(&cancelled), "{cancelled:#}");
    server
        .wait_for("the update of the cancelled job", |messages| {
            messages
                .iter()
                .find(|m| {
                    m["method"] == "notifications/resources/updated" && m["params"]["uri"] == uri
                })
                .cloned()
        })
        .await;
    let (summary, _) = read(&mut server, &uri).await;
    assert!(summary.contains("\"cancelled\""), "{summary}");

    let unknown = refused(
        &mut server,
        "resources/subscribe",
        json!({"uri": "job://job_aaaaaaaaaaaaaaaa"}),
    )
    .await;
    assert_eq!(unknown["code"], -32002, "{unknown:#}");
    ask(&mut server, "resources/unsubscribe", json!({ "uri": &uri })).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompts_are_listed_and_render_our_tool_calls() {
    let mut server = Server::start().await;
    let listed = ask(&mut server, "prompts/list", json!({})).await;
    let names: Vec<&str> = listed["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|prompt| prompt["name"].as_str())
        .collect();
    assert_eq!(names, ["second_opinion", "delegate", "best_of"]);

    let params =
        json!({"name": "delegate", "arguments": {"agent": "claude", "task": "fix \"the\" bug"}});
    let delegate = ask(&mut server, "prompts/get", params).await;
    let text = delegate["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    for expected in [
        "`claude`",
        r#""prompt":"fix \"the\" bug""#,
        r#""isolation":"worktree""#,
        "job_wait",
        "job_diff",
        "job_apply",
        "job_discard",
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }

    let params = json!({"name": "best_of", "arguments": {"agents": "codex, gemini", "task": "t"}});
    let best_of = ask(&mut server, "prompts/get", params).await;
    let text = best_of["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("`codex`, `gemini`"), "{text}");

    let params = json!({"name": "second_opinion", "arguments": {"agent": "gemini"}});
    let review = ask(&mut server, "prompts/get", params).await;
    let text = review["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains(r#""permission":"read-only""#), "{text}");

    let missing = json!({"name": "delegate", "arguments": {"agent": "claude"}});
    let error = refused(&mut server, "prompts/get", missing).await;
    assert_eq!(error["code"], -32602, "{error:#}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("`task`")
    );
    let unknown = refused(&mut server, "prompts/get", json!({"name": "nope"})).await;
    assert!(
        unknown["message"]
            .as_str()
            .expect("message")
            .contains("second_opinion, delegate, best_of"),
        "{unknown:#}"
    );
    let bad_agent = json!({"name": "second_opinion", "arguments": {"agent": "nobody"}});
    let error = refused(&mut server, "prompts/get", bad_agent).await;
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("codex")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_offers_agent_names_and_recent_job_ids() {
    let mut server = Server::start().await;
    let complete = |reference: Value, name: &str, value: &str| json!({"ref": reference, "argument": {"name": name, "value": value}});
    let prompt = json!({"type": "ref/prompt", "name": "delegate"});
    let agents = ask(
        &mut server,
        "completion/complete",
        complete(prompt, "agent", "cla"),
    )
    .await;
    assert_eq!(
        agents["completion"]["values"],
        json!(["claude"]),
        "{agents:#}"
    );
    let best_of = json!({"type": "ref/prompt", "name": "best_of"});
    let listed = ask(
        &mut server,
        "completion/complete",
        complete(best_of, "agents", "codex, ge"),
    )
    .await;
    assert_eq!(listed["completion"]["values"], json!(["codex, gemini"]));

    let done = server.call("codex", json!({"prompt": "answer=x"})).await;
    let id = job_id(&done);
    let template = json!({"type": "ref/resource", "uri": "job://{job_id}/answer"});
    let ids = ask(
        &mut server,
        "completion/complete",
        complete(template.clone(), "job_id", &id[..6]),
    )
    .await;
    assert_eq!(ids["completion"]["values"], json!([id]), "{ids:#}");
    let none = ask(
        &mut server,
        "completion/complete",
        complete(template, "job_id", "job_zzz"),
    )
    .await;
    assert_eq!(none["completion"]["values"], json!([]));
}

/// `models://{agent}` lists, when read, what a CLI that can list its models offers (the fake
/// codex prints the real one's captured catalog), says so for one that cannot, an unknown
/// agent is not found, and its `agent` completes to the agents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_resource_lists_what_a_cli_offers_when_read() {
    let mut server = Server::start().await;
    let (codex, mime) = read(&mut server, "models://codex").await;
    assert_eq!(mime, "application/json");
    let codex: Value = serde_json::from_str(&codex).expect("JSON");
    let listed = codex["models"].as_array().expect("models");
    assert!(listed.contains(&json!("gpt-5.5")), "{codex:#}");
    let (claude, _) = read(&mut server, "models://claude").await;
    assert!(
        claude.contains("claude cannot list its models headless"),
        "{claude}"
    );
    let unknown = refused(
        &mut server,
        "resources/read",
        json!({"uri": "models://nope"}),
    )
    .await;
    let message = unknown["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("names no agent") && message.contains("codex"),
        "{unknown:#}"
    );
    let completed = ask(
        &mut server,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "models://{agent}"},
               "argument": {"name": "agent", "value": "op"}}),
    )
    .await;
    assert_eq!(
        completed["completion"]["values"],
        json!(["opencode"]),
        "{completed:#}"
    );
}
