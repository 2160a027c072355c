//! The newest Claude Code as the host puts our server's questions to the person, on its
//! defaults (protocol 2026-07-28: the question is our call's `InputRequiredResult`, answered
//! by Claude Code's retry) over stdio and over Streamable HTTP, and forced to the old handshake
//! (`MCP_PROTOCOL_NEGOTIATION=legacy`: an `elicitation/create` request). An `Elicitation`
//! hook of Claude Code's settings stands in for the person: it keeps each question it gets
//! and answers accept (with `allow` ticked) or decline.
//!
//! Past the ceiling and outside the roots, an accept runs the inner codex as asked and a
//! decline refuses the call; the real claude as the delegate, at `read-only`, asks before a
//! shell command: the allow runs it, the decline denies it. Our server's log shows which way
//! the question went, and no request to a 2026-07-28 client. Nothing is left behind.

use crate::common;
use crate::real;

use std::path::Path;

use cli_agent_engine::{Agent, clis};
use common::{temp_dir, unique};
use real::hosted::{Served, World, path};
use serde_json::{Value, json};
use tempfile::TempDir;

/// How Claude Code reaches our server.
#[derive(Clone, Copy, Debug)]
enum Link {
    /// Claude Code's defaults: protocol 2026-07-28 on stdio.
    Stdio,
    /// Claude Code's defaults: protocol 2026-07-28 on Streamable HTTP, to a server we started.
    Http,
    /// `MCP_PROTOCOL_NEGOTIATION=legacy`: the `initialize` handshake on stdio.
    LegacyStdio,
}

impl Link {
    const ALL: [Link; 3] = [Link::Stdio, Link::Http, Link::LegacyStdio];

    fn modern(self) -> bool {
        !matches!(self, Link::LegacyStdio)
    }
}

/// The person's answer, as the hook gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    Allow,
    Decline,
}

impl Answer {
    /// What the hook prints: the answer as Claude Code takes it from an `Elicitation` hook.
    fn hook_output(self) -> Value {
        let mut answer = json!({"hookEventName": "Elicitation", "action": "decline"});
        if self == Answer::Allow {
            answer["action"] = json!("accept");
            answer["content"] = json!({"allow": true});
        }
        json!({ "hookSpecificOutput": answer })
    }
}

/// Claude Code hosting our server, which runs `inner` for it, and where our server logs.
struct Asking {
    world: World,
    link: Link,
    /// Our server's log, rmcp's debug lines included.
    log: std::path::PathBuf,
    /// A directory outside the roots our server allows.
    outside: TempDir,
    _logs: TempDir,
}

impl Asking {
    async fn new(inner: Agent, link: Link) -> Option<Self> {
        let logs = temp_dir("host-questions-log");
        let log = logs.path().join("server.log");
        let extra = [
            ("CAM_MAX_PERMISSION", "workspace-write".to_owned()),
            ("CAM_ASK_TIMEOUT_SECS", "120".to_owned()),
            ("CAM_LOG", "info,rmcp=debug".to_owned()),
            ("CAM_LOG_FILE", path(&log)),
        ];
        let served = match link {
            Link::Http => Served::Http,
            Link::Stdio | Link::LegacyStdio => Served::Stdio,
        };
        let world = World::serving(clis::CLAUDE, inner, &extra, served).await?;
        Some(Self {
            world,
            link,
            log,
            outside: temp_dir("host-questions-outside"),
            _logs: logs,
        })
    }

    /// One headless turn of Claude Code on `prompt`, the hook answering `answer`: the hook's
    /// questions, in order.
    async fn turn(&self, prompt: &str, answer: Answer) -> Vec<Value> {
        let asked = self
            .world
            .host
            .root()
            .join(format!("asked-{}.jsonl", unique("turn")));
        let settings = self.hook_settings(&asked, answer);
        let mut turn = self.world.host.host_turn(prompt);
        turn.arg("--settings").arg(settings.to_string());
        if let Link::LegacyStdio = self.link {
            turn.env("MCP_PROTOCOL_NEGOTIATION", "legacy");
        }
        self.world.turn(turn).await;
        std::fs::read_to_string(&asked)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Settings whose `Elicitation` hook appends each question it gets to `asked` and
    /// answers `answer`.
    fn hook_settings(&self, asked: &Path, answer: Answer) -> Value {
        let hook = self
            .world
            .host
            .root()
            .join(format!("{}.sh", unique("hook")));
        let script = format!(
            "#!/bin/sh\n{{ cat; echo; }} >> '{}'\nprintf '%s' '{}'\n",
            asked.display(),
            answer.hook_output()
        );
        write_executable(&hook, &script);
        json!({"hooks": {"Elicitation": [{"hooks": [
            {"type": "command", "command": hook.display().to_string()}
        ]}]}})
    }

    /// Our tools' results as Claude Code handed them to its model, in order.
    fn tool_results(&self) -> Vec<String> {
        let requests = self.world.host_requests();
        let results = requests.iter().filter_map(|r| r["tool_output"].as_str());
        results.map(str::to_owned).collect()
    }

    /// Our server answered a call with the person's question (2026-07-28) or sent the
    /// question as a request (2025-11-25), as its log says; never the other way.
    fn assert_asked_the_links_way(&self) {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let answered = log.contains("the call answers with the person's question");
        let requested = log.contains("asking the person with an elicitation request");
        assert_eq!(
            (answered, requested),
            (self.link.modern(), !self.link.modern()),
            "{:?}: asked by an InputRequiredResult {answered}, by a request {requested}\n{log}",
            self.link
        );
    }
}

fn write_executable(file: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(file, script).expect("write the hook");
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The message of each question the hook got.
fn messages(asked: &[Value]) -> Vec<String> {
    asked
        .iter()
        .map(|question| question["message"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Above the ceiling, then outside the roots, the person answers `answer` to both: allowed,
/// the inner codex runs each call as asked; declined, each call is refused as if nobody had
/// been asked and codex never starts.
async fn past_the_bounds(link: Link, answer: Answer) {
    let Some(asking) = Asking::new(clis::CODEX, link).await else {
        return;
    };
    let (above, outside) = (unique("above"), unique("outside"));
    let prompt = format!(
        "CALL_TOOL: codex {}\nNEXT_CALL: codex {}",
        json!({"prompt": format!("ANSWER: {above}"), "permission": "unlimited"}),
        json!({"prompt": format!("ANSWER: {outside}"), "workspace": asking.outside.path()}),
    );

    let asked = asking.turn(&prompt, answer).await;

    let messages = messages(&asked);
    assert_eq!(messages.len(), 2, "{link:?}: {asked:#?}");
    assert!(
        messages[0].contains("above your ceiling workspace-write"),
        "{messages:#?}"
    );
    assert!(
        messages[1].contains("outside the directories you allow"),
        "{messages:#?}"
    );
    let results = asking.tool_results();
    assert_eq!(results.len(), 2, "{link:?}: {results:#?}");
    for (result, (marker, refusal)) in results.iter().zip([
        // Claude Code quotes a reply that follows a declined question by its first 200
        // characters: the start of our refusal.
        (&above, "is above what this server allows"),
        (&outside, "is outside the directories this server allows"),
    ]) {
        let ran = !asking
            .world
            .mock
            .requests_with(clis::CODEX, marker)
            .is_empty();
        match answer {
            Answer::Allow => {
                assert!(
                    result.contains(marker.as_str()) && ran,
                    "{link:?}: {result}"
                );
            }
            Answer::Decline => {
                assert!(result.contains(refusal) && !ran, "{link:?}: {result}");
            }
        }
    }
    asking.assert_asked_the_links_way();
    asking.world.assert_nothing_left().await;
}

/// The real claude, at `read-only`, asks before a shell command its level does not let it
/// run unasked: allowed, the command runs; declined, claude is told what was denied.
async fn a_delegates_question(link: Link, answer: Answer) {
    let Some(asking) = Asking::new(clis::CLAUDE, link).await else {
        return;
    };
    let shell = "RUN_SHELL: sh -c \"expr 6 '*' 7\"";
    let prompt = format!("CALL_TOOL: claude {}", json!({ "prompt": shell }));

    let asked = asking.turn(&prompt, answer).await;

    let messages = messages(&asked);
    assert_eq!(messages.len(), 1, "{link:?}: {asked:#?}");
    assert!(messages[0].contains("claude's Bash"), "{messages:#?}");
    assert!(messages[0].contains("expr 6"), "{messages:#?}");
    let results = asking.tool_results();
    let result = results.first().expect("our tool's result reached the host");
    match answer {
        Answer::Allow => assert!(result.contains("tool said: 42"), "{link:?}: {result}"),
        Answer::Decline => assert!(
            !result.contains("tool said: 42") && result.contains("denied claude's Bash"),
            "{link:?}: {result}"
        ),
    }
    asking.assert_asked_the_links_way();
    asking.world.assert_nothing_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_on_every_link_asks_the_person_past_the_bounds_and_the_answer_holds() {
    for link in Link::ALL {
        for answer in [Answer::Allow, Answer::Decline] {
            past_the_bounds(link, answer).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_on_every_link_answers_a_real_claude_delegates_question() {
    for link in Link::ALL {
        for answer in [Answer::Allow, Answer::Decline] {
            a_delegates_question(link, answer).await;
        }
    }
}
