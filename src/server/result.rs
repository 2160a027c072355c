//! What a call answers. The text is for the calling model: the answer first, or the error
//! with its hint, then one line with the session id to continue with. `structuredContent` is
//! the whole outcome, as the tools' `outputSchema` declares.

use cli_agent_engine::redact::redact;
use cli_agent_engine::{AgentKind, ErrorKind, Outcome, SetupError, Status};
use rmcp::model::{CallToolResult, ContentBlock};

use super::calls::ServerStop;
use super::tools::ArgsError;

/// How many of stderr's last lines a crash report quotes.
const STDERR_LINES: usize = 20;

/// The result of a run that started.
pub fn from_outcome(mut outcome: Outcome, server_stop: Option<ServerStop>) -> CallToolResult {
    if let (Status::Cancelled, Some(stop), Some(error)) =
        (outcome.status, server_stop, outcome.error.as_mut())
    {
        error.message = format!("the {} run was {}", outcome.agent, stop.describe());
        error.hint = Some(match stop {
            ServerStop::Sigint => "call again to retry".to_owned(),
            ServerStop::Shutdown(_) => "call again once the server is back".to_owned(),
        });
    }
    let mut content = Vec::with_capacity(3);
    if let Some(error) = error_text(&outcome) {
        content.push(ContentBlock::text(error));
    }
    if !outcome.answer.is_empty() {
        content.push(ContentBlock::text(outcome.answer.clone()));
    } else if outcome.status == Status::Completed {
        content.push(ContentBlock::text(format!(
            "({} finished without an answer)",
            outcome.agent
        )));
    }
    content.push(ContentBlock::text(summary(&outcome)));
    let mut result = if outcome.status == Status::Completed {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    result.structured_content = serde_json::to_value(&outcome).ok();
    result
}

/// The result of a call whose run could not start.
pub fn setup_failed(agent: AgentKind, error: &SetupError) -> CallToolResult {
    error_result(format!("{agent} did not start: {error}"))
}

/// Arguments can be quoted back in a parse error, and may hold a key.
pub fn bad_arguments(error: &ArgsError) -> CallToolResult {
    error_result(error.to_string())
}

pub fn shutting_down(agent: AgentKind) -> CallToolResult {
    error_result(format!(
        "{agent} did not start: the server is shutting down; call again once it is back"
    ))
}

/// The result of a call whose run panicked: a bug, reported without taking the server down.
pub fn internal_error(agent: AgentKind, panic: &str) -> CallToolResult {
    error_result(format!(
        "internal error in cli-agent-mcp while running {agent}: {panic}. Only this call failed \
         and its processes were stopped; the server carries on. Please report this bug"
    ))
}

/// An error result of one text, secrets masked (an outcome's are masked by the engine).
fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(redact(&text))])
}

fn error_text(outcome: &Outcome) -> Option<String> {
    let error = outcome.error.as_ref()?;
    let mut text = format!(
        "{} {}: {}",
        outcome.agent,
        outcome.status.name(),
        error.message
    );
    if let Some(hint) = &error.hint {
        text.push_str(&format!("\nhint: {hint}"));
    }
    let tail = last_lines(&outcome.stderr_tail, STDERR_LINES);
    if error.kind == ErrorKind::Crashed && !tail.is_empty() {
        text.push_str(&format!(
            "\n\nlast lines of {}'s stderr:\n```\n{tail}\n```",
            outcome.agent
        ));
    }
    Some(text)
}

fn summary(outcome: &Outcome) -> String {
    let mut parts = vec![format!(
        "{} {} in {:.1} s",
        outcome.agent,
        outcome.status.name(),
        outcome.duration_ms as f64 / 1000.0
    )];
    if let Some(session_id) = &outcome.session_id {
        parts.push(format!(
            "session_id `{session_id}` (pass it back to continue this conversation)"
        ));
    }
    if outcome.tools.calls > 0 {
        parts.push(format!(
            "{} tool calls, {} failed",
            outcome.tools.calls, outcome.tools.failed
        ));
    }
    if !outcome.warnings.is_empty() {
        parts.push(format!("warnings: {}", outcome.warnings.join("; ")));
    }
    parts.join(" · ")
}

fn last_lines(text: &str, count: usize) -> &str {
    let text = text.trim_end();
    let start = text
        .rmatch_indices('\n')
        .nth(count.saturating_sub(1))
        .map_or(0, |(at, _)| at + 1);
    &text[start..]
}

#[cfg(test)]
mod tests {
    use cli_agent_engine::{ErrorInfo, ToolSummary};

    use super::*;

    fn outcome(status: Status, answer: &str, error: Option<ErrorInfo>) -> Outcome {
        Outcome {
            agent: AgentKind::Codex,
            status,
            answer: answer.to_owned(),
            session_id: Some("s-1".to_owned()),
            reasoning: None,
            tools: ToolSummary::default(),
            usage: None,
            exit_code: Some(0),
            exit_signal: None,
            duration_ms: 1500,
            stderr_tail: "one\ntwo\nthree\n".to_owned(),
            warnings: Vec::new(),
            error,
        }
    }

    fn texts(result: &CallToolResult) -> Vec<String> {
        result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.clone()))
            .collect()
    }

    #[test]
    fn a_completed_run_answers_first_and_names_its_session() {
        let result = from_outcome(outcome(Status::Completed, "the answer", None), None);
        assert_eq!(result.is_error, Some(false));
        let texts = texts(&result);
        assert_eq!(texts[0], "the answer");
        assert!(texts[1].contains("session_id `s-1`"), "{}", texts[1]);
        assert_eq!(
            result.structured_content.expect("structured")["status"],
            "completed"
        );
    }

    #[test]
    fn a_crash_is_an_error_with_its_hint_and_stderr() {
        let error = ErrorInfo {
            kind: ErrorKind::Crashed,
            message: "codex exited with code 3".to_owned(),
            hint: Some("read stderr".to_owned()),
        };
        let result = from_outcome(outcome(Status::Failed, "", Some(error)), None);
        assert_eq!(result.is_error, Some(true));
        let first = &texts(&result)[0];
        assert!(first.starts_with("codex failed: codex exited with code 3\nhint: read stderr"));
        assert!(first.contains("```\none\ntwo\nthree\n```"), "{first}");
    }

    #[test]
    fn a_run_the_server_cancelled_says_why() {
        let error = ErrorInfo {
            kind: ErrorKind::Cancelled,
            message: "the codex run was cancelled".to_owned(),
            hint: None,
        };
        let result = from_outcome(
            outcome(Status::Cancelled, "", Some(error)),
            Some(ServerStop::Sigint),
        );
        assert_eq!(result.is_error, Some(true));
        assert!(texts(&result)[0].contains("cancelled by SIGINT"));
        let structured = result.structured_content.expect("structured");
        assert!(
            structured["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("cancelled by SIGINT"))
        );
    }

    #[test]
    fn last_lines_keeps_the_end() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a\nb", 5), "a\nb");
        assert_eq!(last_lines("", 5), "");
    }
}
