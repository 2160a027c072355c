//! A delegate's own permission questions reach the person: the real claude (against the mock
//! model) runs through the server at `read-only`, its model asks for a shell command claude
//! would refuse headless, claude asks the run's private endpoint (`--permission-prompt-tool`),
//! and the question arrives at this client as an elicitation. Accept: the command runs (its
//! output reaches the answer). Decline: it does not, and the answer says what was denied. A
//! file edit a read-only call may not make is denied without asking. Once the run is over,
//! its endpoint refuses connections. Skips when claude is not installed (see tests/real).

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

    let decline = json!({"action": "decline"});
    let (_, result) = call_answering(&mut server, SHELL, decline).await;
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

    let before = asked(&server).len();
    let result = server
        .call("claude", json!({"prompt": "WRITE_FILE: notes.txt hi"}))
        .await;
    let said = answer(&result);
    assert!(said.contains("a read-only call edits no files"), "{said}");
    assert_eq!(asked(&server).len(), before, "a forbidden edit was asked");

    let opened = endpoints(&server);
    assert_eq!(opened.len(), 3, "one endpoint per run: {opened:?}");
    for address in opened {
        wait_until("the finished run's endpoint refuses connections", || {
            std::net::TcpStream::connect(&address).is_err()
        })
        .await;
    }
}
