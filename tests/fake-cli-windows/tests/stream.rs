//! The fake CLI's stream, as the engine reads it: codex's events in order, and an answer that
//! gives back the working directory, the arguments and the prompt's bytes exactly. Runs on
//! Linux too (the stream does not depend on the OS) and under Wine by scripts/check-windows.
// Its helpers may unwrap: a panic there is a failed test, with its place (clippy.toml).
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

const FAKE: &str = env!("CARGO_BIN_EXE_cli-agent-fake-cli-windows");

/// The events of one run of the fake with these arguments, prompt and working directory, and
/// its exit code.
fn run(args: &[&str], prompt: &[u8], cwd: &std::path::Path) -> (Vec<Value>, Option<i32>) {
    let mut fake = Command::new(FAKE)
        .args(args)
        .current_dir(cwd)
        .env_remove("FAKE_CLI_DIRECTIVES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the fake CLI starts");
    fake.stdin.take().unwrap().write_all(prompt).unwrap();
    let out = fake.wait_with_output().unwrap();
    let events = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect();
    (events, out.status.code())
}

#[test]
fn the_answer_gives_back_cwd_argv_and_the_prompt_byte_for_byte() {
    let cwd = std::env::temp_dir().join(format!("fake cli & 100% ^{}", std::process::id()));
    std::fs::create_dir_all(&cwd).unwrap();
    let prompt = b"say \"hi\" 100% ^ & | ! \n\xff\xfe exit=5";
    let args = ["exec", "--json", "a b", "q\"uote", "-"];
    let (events, code) = run(&args, prompt, &cwd);
    std::fs::remove_dir(&cwd).unwrap();

    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "thread.started",
            "turn.started",
            "item.completed",
            "turn.completed"
        ]
    );
    assert_eq!(events[0]["thread_id"].as_str().unwrap().len(), 36);
    assert_eq!(events[2]["item"]["type"], "agent_message");
    assert_eq!(events[3]["usage"]["output_tokens"], 7);
    let answer: Value = serde_json::from_str(events[2]["item"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(answer["argv"], serde_json::json!(args));
    let hex: String = prompt.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(answer["prompt_hex"], hex);
    let got_cwd = std::path::PathBuf::from(answer["cwd"].as_str().unwrap());
    assert_eq!(got_cwd.file_name(), cwd.file_name());
    assert_eq!(code, Some(5), "exit=5 in the prompt sets the exit code");
}

#[test]
fn exec_resume_continues_the_thread_it_names() {
    let (events, code) = run(
        &["exec", "--json", "resume", "thread-9", "-"],
        b"go on",
        &std::env::temp_dir(),
    );
    assert_eq!(events[0]["thread_id"], "thread-9");
    assert_eq!(code, Some(0));
}
