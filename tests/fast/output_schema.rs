//! `output_schema` over the built server with the fake CLI: the schema reaches codex by its
//! flag and gemini in its prompt; a conforming answer comes back parsed as
//! `structuredContent.output` (also from `job_wait` and `job_result`'s first page), a
//! non-conforming one is an error naming why with the raw answer kept, and an invalid schema
//! is refused before any CLI starts; the same through `cli-agent-mcp run --output-schema FILE`.

use crate::common;
use crate::mcp;

use common::temp_dir;
use mcp::{Server, all_text, is_error, structured, texts};
use serde_json::{Value, json};
use tempfile::TempDir;

fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["ok", "bad"]},
            "score": {"type": "integer"}
        },
        "required": ["verdict", "score"]
    })
}

/// A server whose fake CLIs may write their argv outside the workspace (a test instrument).
async fn unconfined_server(home: &TempDir) -> Server {
    let mut server = Server::builder()
        .env("CAM_SANDBOX", "off")
        .cwd(home.path())
        .spawn();
    server.initialize().await;
    server
}

fn argv_seen(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("argv-out")).expect("argv json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conforming_answer_comes_back_parsed_as_output() {
    let home = temp_dir("schema-home");
    let mut server = unconfined_server(&home).await;
    let argv_out = home.path().join("argv.json");
    let answer = r#"{"verdict":"ok","score":7}"#;
    for agent in ["codex", "gemini"] {
        let prompt = format!("answer={answer} argv-out={}", argv_out.display());
        let result = server
            .call(
                agent,
                json!({"prompt": prompt, "output_schema": verdict_schema()}),
            )
            .await;
        assert!(!is_error(&result), "{result:#}");
        assert_eq!(
            structured(&result)["output"],
            json!({"verdict": "ok", "score": 7})
        );
        assert_eq!(texts(&result)[0], answer, "the text keeps the answer");
        let seen = argv_seen(&argv_out);
        let (argv, prompt) = (seen["argv"].to_string(), seen["prompt"].to_string());
        if agent == "codex" {
            assert!(argv.contains("--output-schema="), "{argv}");
            assert!(!prompt.contains("JSON Schema"), "{prompt}");
        } else {
            assert!(prompt.contains("exactly one JSON value"), "{prompt}");
            assert!(prompt.contains(r#"\"required\":[\"verdict\",\"score\"]"#));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_conforming_answer_is_an_error_naming_why_with_the_raw_answer() {
    let mut server = Server::start().await;
    let schema = verdict_schema();
    let wrong = r#"{"verdict":"maybe"}"#;
    let result = server
        .call(
            "claude",
            json!({"prompt": format!("answer={wrong}"), "output_schema": schema}),
        )
        .await;
    assert!(is_error(&result), "{result:#}");
    let report = structured(&result);
    assert_eq!(report["status"], "failed", "{result:#}");
    assert_eq!(report["error"]["kind"], "invalid_output");
    let message = report["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("at `/verdict`"), "{message}");
    assert!(
        message.contains("\"score\" is a required property"),
        "{message}"
    );
    assert_eq!(report["answer"], wrong);
    assert!(report.get("output").is_none(), "{result:#}");
    assert!(all_text(&result).contains(wrong), "{result:#}");

    let prose = server
        .call(
            "opencode",
            json!({"prompt": "answer=Sure,_here_it_is", "output_schema": schema}),
        )
        .await;
    assert!(is_error(&prose), "{prose:#}");
    let message = structured(&prose)["error"]["message"].to_string();
    assert!(message.contains("not JSON"), "{message}");
    assert_eq!(structured(&prose)["answer"], "Sure, here it is");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_schema_is_refused_before_any_cli_starts() {
    let home = temp_dir("schema-refused");
    let mut server = unconfined_server(&home).await;
    let argv_out = home.path().join("argv.json");
    let prompt = format!("argv-out={}", argv_out.display());
    for schema in [
        json!({"type": "no-such-type"}),
        json!({"minLength": "three"}),
    ] {
        let result = server
            .call("claude", json!({"prompt": prompt, "output_schema": schema}))
            .await;
        assert!(is_error(&result), "{result:#}");
        let text = all_text(&result);
        assert!(text.contains("not a valid JSON Schema"), "{text}");
        assert!(text.contains("Fix the schema"), "{text}");
    }
    let not_an_object = server
        .call(
            "claude",
            json!({"prompt": prompt, "output_schema": "object"}),
        )
        .await;
    assert!(is_error(&not_an_object), "{not_an_object:#}");
    assert!(!argv_out.exists(), "a CLI started");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_jobs_output_comes_back_from_job_wait() {
    let mut server = Server::start().await;
    let started = server
        .call(
            "qwen",
            json!({"prompt": r#"answer={"verdict":"bad","score":0}"#, "background": true,
                   "output_schema": verdict_schema()}),
        )
        .await;
    let id = structured(&started)["job_id"]
        .as_str()
        .expect("a job id")
        .to_owned();
    let waited = loop {
        let waited = server
            .call("job_wait", json!({"job_ids": [&id], "timeout_secs": 30}))
            .await;
        if structured(&waited)["unfinished"] == 0 {
            break waited;
        }
    };
    let job = &structured(&waited)["jobs"][0];
    assert_eq!(job["status"], "completed", "{waited:#}");
    assert_eq!(job["output"], json!({"verdict": "bad", "score": 0}));

    let first = server.call("job_result", json!({"job_id": &id})).await;
    assert_eq!(
        structured(&first)["output"],
        json!({"verdict": "bad", "score": 0}),
        "job_result's first page: {first:#}"
    );
    let later = server
        .call("job_result", json!({"job_id": &id, "offset": 1}))
        .await;
    assert!(structured(&later).get("output").is_none(), "{later:#}");
}

/// `cli-agent-mcp run --json --output-schema <schema> claude <prompt>` against the fake, in
/// `dir`, its runs recorded there.
fn run_with_schema_file(dir: &TempDir, schema: &Value, prompt: &str) -> std::process::Output {
    let schema_file = dir.path().join("schema.json");
    std::fs::write(&schema_file, schema.to_string()).expect("write the schema");
    let fake = common::fake_cli("claude");
    common::cam_command()
        .env("CAM_STATE_DIR", dir.path().join("state"))
        .env("CAM_SANDBOX", "off")
        .env("CAM_CLAUDE_BIN", fake)
        .args(["run", "--json", "--workspace"])
        .arg(dir.path())
        .arg("--output-schema")
        .arg(&schema_file)
        .args(["claude", prompt])
        .output()
        .expect("run cli-agent-mcp run")
}

#[test]
fn run_validates_the_answer_against_a_schema_file() {
    let dir = temp_dir("schema-run");
    let out = run_with_schema_file(
        &dir,
        &verdict_schema(),
        r#"answer={"verdict":"ok","score":2}"#,
    );
    assert!(out.status.success(), "{out:?}");
    let outcome: Value = serde_json::from_slice(&out.stdout).expect("the outcome as JSON");
    assert_eq!(outcome["output"], json!({"verdict": "ok", "score": 2}));

    let out = run_with_schema_file(&dir, &verdict_schema(), r#"answer={"score":2}"#);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let outcome: Value = serde_json::from_slice(&out.stdout).expect("the outcome as JSON");
    assert_eq!(outcome["error"]["kind"], "invalid_output", "{outcome}");

    let argv_out = dir.path().join("argv.json");
    let prompt = format!("argv-out={}", argv_out.display());
    let out = run_with_schema_file(&dir, &json!({"type": 7}), &prompt);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a valid JSON Schema"), "{stderr}");
    assert!(!argv_out.exists(), "a CLI started");
}
