//! `output_schema` with the real CLIs against the mock model: codex gets it by
//! `--output-schema` and sends it to the model as the response format, claude and qwen by
//! `--json-schema` and offer the model their structured-output tool, gemini (no such flag) in
//! the prompt; each answer is validated into the outcome's `output`, and one that does not
//! conform fails naming why. A CLI that is not installed skips locally and fails in CI.

use crate::real;

use cli_agent_engine::{Agent, ErrorKind, Outcome, OutputSchema, Status, clis};
use real::{MockModel, Retries, Sandbox, run};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn verdict_schema() -> OutputSchema {
    OutputSchema::new(json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["ok", "bad"]},
            "score": {"type": "integer"}
        },
        "required": ["verdict", "score"],
        "additionalProperties": false
    }))
    .expect("a valid schema")
}

fn setup(agent: Agent) -> Option<(MockModel, Sandbox)> {
    let bin = real::installed(agent)?;
    let mock = MockModel::start();
    let sandbox = Sandbox::new(agent, &bin, mock.port, Retries::Shortened);
    Some((mock, sandbox))
}

async fn run_with_schema(sandbox: &Sandbox, prompt: &str) -> Outcome {
    let mut request = sandbox.request(prompt);
    request.output_schema = Some(verdict_schema());
    run(sandbox, request, CancellationToken::new()).await.0
}

fn assert_output(outcome: &Outcome, expected: Value) {
    assert_eq!(outcome.status, Status::Completed, "{outcome:#?}");
    assert_eq!(outcome.output, Some(expected), "{outcome:#?}");
}

fn assert_invalid_output(outcome: &Outcome, why: &str) {
    assert_eq!(outcome.status, Status::Failed, "{outcome:#?}");
    let error = outcome.error.as_ref().expect("an error");
    assert_eq!(error.kind, ErrorKind::InvalidOutput, "{outcome:#?}");
    assert!(error.message.contains(why), "{outcome:#?}");
    assert!(outcome.output.is_none());
}

/// The model requests of `agent` whose body mentions the schema's `verdict` property.
fn requests_carrying_the_schema(mock: &MockModel, agent: Agent) -> Vec<Value> {
    mock.requests()
        .into_iter()
        .filter(|request| request["protocol"] == agent.name())
        .filter(|request| {
            request["body"]
                .to_string()
                .contains(r#""enum":["ok","bad"]"#)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_takes_the_schema_by_its_flag_and_the_answer_is_validated() {
    let Some((mock, sandbox)) = setup(clis::CODEX) else {
        return;
    };
    let outcome = run_with_schema(&sandbox, r#"ANSWER: {"verdict":"ok","score":7}"#).await;
    assert_output(&outcome, json!({"verdict": "ok", "score": 7}));
    let carried = requests_carrying_the_schema(&mock, clis::CODEX);
    assert!(
        carried
            .iter()
            .any(|request| request["body"]["text"]["format"]["type"] == "json_schema"),
        "codex did not send the schema as its response format: {:#?}",
        mock.requests()
    );

    let outcome = run_with_schema(&sandbox, r#"ANSWER: {"verdict":"ok"}"#).await;
    assert_invalid_output(&outcome, "\"score\" is a required property");
    assert_eq!(outcome.answer.trim(), r#"{"verdict":"ok"}"#);
    sandbox.assert_nothing_left();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_takes_the_schema_by_its_flag_and_the_answer_is_validated() {
    let Some((mock, sandbox)) = setup(clis::CLAUDE) else {
        return;
    };
    let prompt = r#"CALL_TOOL: StructuredOutput {"verdict":"bad","score":2}"#;
    let outcome = run_with_schema(&sandbox, prompt).await;
    assert_output(&outcome, json!({"verdict": "bad", "score": 2}));
    assert!(
        !requests_carrying_the_schema(&mock, clis::CLAUDE).is_empty(),
        "claude did not offer the schema to the model: {:#?}",
        mock.requests()
    );
    sandbox.assert_nothing_left();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_takes_the_schema_by_its_flag_and_the_answer_is_validated() {
    let Some((mock, sandbox)) = setup(clis::QWEN) else {
        return;
    };
    let prompt = r#"CALL_TOOL: structured_output {"verdict":"ok","score":3}"#;
    let outcome = run_with_schema(&sandbox, prompt).await;
    assert_output(&outcome, json!({"verdict": "ok", "score": 3}));
    assert!(
        !requests_carrying_the_schema(&mock, clis::QWEN).is_empty(),
        "qwen did not offer the schema to the model: {:#?}",
        mock.requests()
    );
    sandbox.assert_nothing_left();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_gets_the_schema_in_its_prompt_and_the_answer_is_validated() {
    let Some((mock, sandbox)) = setup(clis::GEMINI) else {
        return;
    };
    let outcome = run_with_schema(&sandbox, r#"ANSWER: {"verdict":"ok","score":1}"#).await;
    assert_output(&outcome, json!({"verdict": "ok", "score": 1}));
    assert!(
        !mock
            .requests_with(clis::GEMINI, "exactly one JSON value")
            .is_empty(),
        "the schema's instruction did not reach the model: {:#?}",
        mock.requests()
    );

    let outcome = run_with_schema(&sandbox, r#"ANSWER: {"verdict":"ok","score":1.5}"#).await;
    assert_invalid_output(&outcome, "at `/score`");
    sandbox.assert_nothing_left();
}
