//! A delegate's own permission questions reach the person: the real claude (against the mock
//! model) runs through the server at `read-only`, its model asks for a shell command claude
//! would refuse headless, claude asks the run's private endpoint (`--permission-prompt-tool`),
//! and the question arrives at this client as an elicitation. Accept: the command runs (its
//! output reaches the answer). Decline: it does not, and the answer says what was denied. A
//! file edit a read-only call may not make is denied without asking. Once the run is over,
//! its endpoint refuses connections. Each question and its answer is an event of the job's
//! transcript (`job_result transcript: true`): asked and answered before the command's result,
//! saying who answered. Skips when claude is not installed (see tests/real).

mod common;
mod mcp;
mod real;

use cli_agent_engine::clis;
use common::wait_until;
use mcp::{Server, is_error};
use real::{MockModel, Retries, Sandbox};
use serde_json::{Value, json};

const ELICIT: &str = "elicitation/create";
/// A command claude does not count as read-only (it lets `expr` alone run unasked), whose
/// output the prompt does not contain.
const SHELL: &str = "RUN_SHELL: sh -c \"expr 6 '*' 7\"";

/// The mock model, claude's sandbox and a server whose client can be asked.
async fn serve() -> Option<(MockModel, Sandbox, Server)> {
    let bin = real::installed(clis::CLAUDE)?;
    let mock = MockModel::start();
    let sandbox = Sandbox::new(clis::CLAUDE, &bin, mock.port, Retries::Shortened);
    let builder = sandbox
        .env()
        .iter()
        .fold(Server::builder(), |builder, (key, value)| {
            builder.env(key, value)
        });
    let mut server = builder
        .env(&clis::CLAUDE.env_var("BIN"), &sandbox.wrapper)
        .env("CAM_ASK_TIMEOUT_SECS", "120")
        .cwd(&sandbox.workspace)
        .spawn();
    server
        .initialize_declaring(mcp::LEGACY_VERSION, json!({"elicitation": {"form": {}}}))
        .await;
    Some((mock, sandbox, server))
}

/// The events of job `result`'s transcript, in order.
async fn transcript(server: &mut Server, result: &Value) -> Vec<Value> {
    let id = &result["structuredContent"]["job_id"];
    let arguments = json!({"job_id": id, "transcript": true, "limit": 10_000});
    let page = server.call("job_result", arguments).await;
    let lines = page["structuredContent"]["text"]
        .as_str()
        .unwrap_or_default();
    let events = lines
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"));
    events.collect()
}

/// The one question in `events`, checked to come before the turn ends; `before` is the
/// `type` of an event the answer must precede as well (the tool's result, when it ran).
fn the_question<'a>(events: &'a [Value], before: &[&str]) -> &'a Value {
    let at = |kind: &str| events.iter().position(|event| event["type"] == kind);
    let questions: Vec<_> = events.iter().filter(|e| e["type"] == "question").collect();
    assert_eq!(questions.len(), 1, "one question: {events:#?}");
    let asked = at("question").expect("asked");
    for kind in before.iter().chain(&["turn_completed"]) {
        let then = at(kind).unwrap_or_else(|| panic!("no {kind}: {events:#?}"));
        assert!(
            asked < then,
            "the question comes before {kind}: {events:#?}"
        );
    }
    questions[0]
}

fn answer(result: &Value) -> String {
    assert!(!is_error(result), "{result:#}");
    result["structuredContent"]["answer"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Call claude with `prompt` at read-only, answer its one question with `reply`, and return
/// the question and the call's result.
async fn call_answering(server: &mut Server, prompt: &str, reply: Value) -> (Value, Value) {
    let answered = asked(server);
    let call = server
        .start_call("claude", json!({"prompt": prompt}), None)
        .await;
    let question = server.server_request(ELICIT, &answered).await;
    server.respond(&question["id"], reply).await;
    (question, server.result(call).await)
}

/// The ids of the questions the server has sent so far.
fn asked(server: &Server) -> Vec<Value> {
    let messages = server.messages();
    let questions = messages.iter().filter(|m| m["method"] == ELICIT);
    questions.map(|m| m["id"].clone()).collect()
}

/// The address of every question endpoint the server opened, from its log.
fn endpoints(server: &Server) -> Vec<String> {
    let log = server.stderr();
    let urls = log.split("url=http://").skip(1);
    let addresses = urls.filter_map(|rest| rest.split('/').next());
    addresses.map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claudes_permission_questions_are_asked_of_the_person_and_the_answer_holds() {
    let Some((_mock, _sandbox, mut server)) = serve().await else {
        return;
    };
    let allow = json!({"action": "accept", "content": {"allow": true}});
    let (question, result) = call_answering(&mut server, SHELL, allow).await;
    let message = question["params"]["message"].as_str().unwrap_or_default();
    for expected in ["claude", "Bash", "expr 6", "read-only"] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }
    assert!(answer(&result).contains("tool said: 42"), "{result:#}");
    let events = transcript(&mut server, &result).await;
    let allowed = the_question(&events, &["tool_finished"]);
    assert_eq!(allowed["about"], "tool_permission", "{allowed:#}");
    assert_eq!(allowed["tool"], "Bash", "{allowed:#}");
    assert!(
        allowed["input"].as_str().unwrap().contains("expr 6"),
        "{allowed:#}"
    );
    assert_eq!(allowed["answer"], "allowed", "{allowed:#}");
    assert_eq!(allowed["answered_by"], "cli-agent-mcp-tests", "{allowed:#}");

    let decline = json!({"action": "decline"});
    let (_, result) = call_answering(&mut server, SHELL, decline).await;
    let events = transcript(&mut server, &result).await;
    let declined = the_question(&events, &[]);
    assert_eq!(
        (&declined["tool"], &declined["answer"]),
        (&json!("Bash"), &json!("declined"))
    );
    assert_eq!(
        declined["answered_by"], "cli-agent-mcp-tests",
        "{declined:#}"
    );
    let said = answer(&result);
    assert!(
        !said.contains("tool said: 42"),
        "a declined command ran: {said}"
    );
    for expected in [
        "denied claude's Bash",
        "the person declined",
        "higher permission level",
    ] {
        assert!(said.contains(expected), "{expected:?} in {said}");
    }
    let warnings = result["structuredContent"]["warnings"].to_string();
    assert!(
        warnings.contains("cli-agent-mcp denied claude's Bash")
            && warnings.contains("the person declined"),
        "the result names the denial, whatever the agent says: {warnings}"
    );

    let before = asked(&server).len();
    let result = server
        .call("claude", json!({"prompt": "WRITE_FILE: notes.txt hi"}))
        .await;
    let said = answer(&result);
    assert!(said.contains("a read-only call edits no files"), "{said}");
    assert_eq!(asked(&server).len(), before, "a forbidden edit was asked");
    let events = transcript(&mut server, &result).await;
    let unasked = the_question(&events, &[]);
    assert_eq!(unasked["answer"], "denied_without_asking", "{unasked:#}");
    assert_eq!(unasked["answered_by"], Value::Null, "{unasked:#}");
    assert_eq!(
        unasked["why"], "a read-only call edits no files",
        "{unasked:#}"
    );

    let opened = endpoints(&server);
    assert_eq!(opened.len(), 3, "one endpoint per run: {opened:?}");
    for address in opened {
        wait_until("the finished run's endpoint refuses connections", || {
            std::net::TcpStream::connect(&address).is_err()
        })
        .await;
    }
}
