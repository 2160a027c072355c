//! What a call answers. Hosts hand their model the `structuredContent` JSON (the real Claude
//! Code and Codex both do), so it is lean: status, answer, session and job ids, error and hint,
//! usage; the answer keeps its head and tail within the budget and names the `job_result` call
//! that returns the rest, and reasoning, tools and stderr are cut hard. The text content says
//! the same for clients that read text: the error with its hint, the answer, one summary line.

use cli_agent_engine::outcome::CommandOutcome;
use cli_agent_engine::redact::redact;
use cli_agent_engine::{Agent, ErrorInfo, ErrorKind, Outcome, Usage};
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Serialize;

use crate::budget::{head_and_tail, tail};
use crate::changes_report::ChangesReport;
use crate::jobs::store::{JobId, JobRecord, JobStatus, now_ms};
use crate::jobs::{Finished, Job, JobState, Refused};

/// How many characters of reasoning and of the stderr tail a result carries.
const SIDE_TEXT_CHARS: usize = 2000;
/// How many of the latest tool calls a result lists.
const RECENT_TOOLS: usize = 5;
/// How many warnings a result carries.
const WARNINGS: usize = 5;

/// One job as a result reports it: finished, or still queued or running.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct JobReport {
    pub job_id: JobId,
    /// The agent's name.
    pub agent: String,
    pub status: JobStatus,
    /// The final answer, its middle left out when it is over the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The whole answer's length in characters: `job_result` pages through it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_chars: Option<u64>,
    /// Pass it back as `session_id` to continue the conversation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What an unfinished job is doing now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// The question the job waits on the person to answer on its dashboard page (status
    /// `needs_input`). Only the person answers it there: tell them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The call to make next, for an unfinished job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsBrief>,
    /// The end of the agent's reasoning, where the CLI reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// The end of the CLI's stderr, for a run that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the run changed, for a run that may write in git or an isolated one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<ChangesReport>,
    /// The check command run in the job's tree after the agent ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<CommandOutcome>,
    /// The answer parsed as JSON, for a call with an `output_schema` whose answer conforms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ToolsBrief {
    pub calls: u32,
    pub failed: u32,
    /// The latest commands the agent ran, oldest first.
    pub recent: Vec<String>,
}

impl JobReport {
    fn new(id: &JobId, agent: &str, status: JobStatus) -> Self {
        Self {
            job_id: id.clone(),
            agent: agent.to_owned(),
            status,
            answer: None,
            answer_chars: None,
            session_id: None,
            error: None,
            usage: None,
            progress: None,
            waiting_for: None,
            elapsed_secs: None,
            duration_ms: None,
            next: None,
            tools: None,
            reasoning: None,
            stderr_tail: None,
            warnings: Vec::new(),
            changes: None,
            check: None,
            output: None,
        }
    }

    /// A finished job; its answer within `budget` characters.
    pub fn finished(id: &JobId, finished: &Finished, budget: usize) -> Self {
        let outcome = &finished.outcome;
        let answer = budgeted_answer(id, &outcome.answer, budget);
        let failed = finished.status != JobStatus::Completed;
        Self {
            answer: (!outcome.answer.is_empty()).then(|| answer.into_owned()),
            answer_chars: (!outcome.answer.is_empty())
                .then(|| outcome.answer.chars().count() as u64),
            session_id: outcome.session_id.clone(),
            error: outcome.error.clone(),
            usage: outcome.usage,
            duration_ms: Some(outcome.duration_ms),
            tools: (outcome.tools.calls > 0).then(|| tools_brief(outcome)),
            reasoning: outcome
                .reasoning
                .as_deref()
                .map(|text| tail(text, SIDE_TEXT_CHARS).into_owned()),
            stderr_tail: (failed && !outcome.stderr_tail.is_empty())
                .then(|| tail(&outcome.stderr_tail, SIDE_TEXT_CHARS).into_owned()),
            warnings: outcome.warnings.iter().take(WARNINGS).cloned().collect(),
            changes: outcome
                .tree
                .as_ref()
                .map(|tree| ChangesReport::of(id, tree)),
            check: outcome.check.clone(),
            output: outcome.output.clone(),
            ..Self::new(id, &outcome.agent, finished.status)
        }
    }

    /// A job still queued, running or waiting on the person, with the call that collects it.
    fn unfinished(
        id: &JobId,
        agent: &str,
        status: JobStatus,
        elapsed_secs: u64,
        progress: Option<String>,
    ) -> Self {
        Self {
            progress: progress.map(|line| redact(&line).into_owned()),
            elapsed_secs: Some(elapsed_secs),
            next: Some(wait_call(id)),
            ..Self::new(id, agent, status)
        }
    }

    /// What a job of this server reports now.
    pub fn of_job(job: &Job, budget: usize) -> Self {
        let waiting_for = job.waiting_for();
        let status = match job.state() {
            JobState::Finished(finished) => return Self::finished(&job.id, &finished, budget),
            _ if waiting_for.is_some() => JobStatus::NeedsInput,
            JobState::Queued => JobStatus::Queued,
            JobState::Running => JobStatus::Running,
        };
        let report = Self::unfinished(
            &job.id,
            job.agent.name(),
            status,
            job.elapsed().as_secs(),
            job.progress.line(),
        );
        Self {
            waiting_for,
            ..report
        }
    }

    /// What a job of the store reports: `finished` is its end, once it has ended.
    pub fn of_record(record: &JobRecord, finished: Option<&Finished>, budget: usize) -> Self {
        if let Some(finished) = finished {
            return Self::finished(&record.id, finished, budget);
        }
        let report = Self::unfinished(
            &record.id,
            &record.agent,
            record.status,
            now_ms().saturating_sub(record.created_ms) / 1000,
            record.progress.clone(),
        );
        Self {
            waiting_for: record
                .waiting_for
                .as_ref()
                .map(|question| question.asked.clone()),
            ..report
        }
    }

    fn is_unfinished(&self) -> bool {
        self.next.is_some()
    }

    /// The text a client that reads text shows its model.
    pub fn text(&self) -> Vec<String> {
        if self.is_unfinished() {
            return vec![self.handoff_text()];
        }
        let mut texts = Vec::with_capacity(3);
        texts.extend(self.error_text());
        match &self.answer {
            Some(answer) => texts.push(answer.clone()),
            None if self.status == JobStatus::Completed => {
                texts.push(format!("({} finished without an answer)", self.agent));
            }
            None => {}
        }
        texts.extend(self.text_besides_answer());
        texts
    }

    /// What a finished job says besides its error and answer: its changes, its check and the
    /// summary line (job_result puts them after a page of the answer).
    pub fn text_besides_answer(&self) -> Vec<String> {
        let mut texts = Vec::with_capacity(3);
        if let Some(changes) = &self.changes {
            texts.push(changes.text());
        }
        if let Some(check) = &self.check {
            texts.push(check_text(check));
        }
        texts.push(self.summary());
        texts
    }

    fn handoff_text(&self) -> String {
        if let Some(question) = &self.waiting_for {
            return format!(
                "{} job {} waits for the person to answer a question on the job's dashboard \
                 page (`cli-agent-mcp dashboard`, or this server's HTTP address): tell them. \
                 No tool answers it. It asks:\n{question}\nOnce answered, the job carries \
                 on: collect it with {}; job_cancel stops it.",
                self.agent,
                self.job_id,
                self.next.as_deref().unwrap_or("job_wait"),
            );
        }
        let doing = self
            .progress
            .as_deref()
            .map_or(String::new(), |line| format!(" (last: {line})"));
        format!(
            "{} is still {} as job {} after {} s{doing}. Nothing is lost: the job carries on. \
             Collect its answer with {}; job_cancel stops it.",
            self.agent,
            self.status,
            self.job_id,
            self.elapsed_secs.unwrap_or(0),
            self.next.as_deref().unwrap_or("job_wait"),
        )
    }

    /// The error with its hint (and stderr's end for a crash), for a job that ended in one.
    pub fn error_text(&self) -> Option<String> {
        let error = self.error.as_ref()?;
        let mut text = format!("{} {}: {}", self.agent, self.status, error.message);
        if let Some(hint) = &error.hint {
            text.push_str(&format!("\nhint: {hint}"));
        }
        if let (ErrorKind::Crashed, Some(stderr)) = (error.kind, &self.stderr_tail) {
            text.push_str(&format!(
                "\n\nlast lines of {}'s stderr:\n```\n{}\n```",
                self.agent,
                stderr.trim_end()
            ));
        }
        Some(text)
    }

    fn summary(&self) -> String {
        let seconds = self.duration_ms.unwrap_or(0) as f64 / 1000.0;
        let mut parts = vec![format!(
            "{} {} in {seconds:.1} s (job {})",
            self.agent, self.status, self.job_id
        )];
        if let Some(session_id) = &self.session_id {
            parts.push(format!(
                "session_id `{session_id}` (pass it back to continue this conversation)"
            ));
        }
        if let Some(tools) = &self.tools {
            parts.push(format!(
                "{} tool calls, {} failed",
                tools.calls, tools.failed
            ));
        }
        if !self.warnings.is_empty() {
            parts.push(format!("warnings: {}", self.warnings.join("; ")));
        }
        parts.join(" · ")
    }

    /// This report as a tool result: an error result for a job that ended without completing.
    pub fn into_result(self) -> CallToolResult {
        let content = self.text().into_iter().map(ContentBlock::text).collect();
        let failed = !self.is_unfinished() && self.status != JobStatus::Completed;
        let mut result = if failed {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = serde_json::to_value(&self).ok();
        result
    }
}

/// A check's verdict, with the end of its output when it did not pass.
pub fn check_text(check: &CommandOutcome) -> String {
    let seconds = check.duration_ms as f64 / 1000.0;
    let verdict = if check.passed { "passed" } else { "FAILED" };
    let mut text = format!(
        "check `{}`: {verdict} ({}) in {seconds:.1} s",
        check.command,
        check.describe_end()
    );
    if !check.passed && !check.output_tail.is_empty() {
        text.push_str(&format!(
            "; its output ends:\n```\n{}\n```",
            check.output_tail
        ));
    }
    text
}

/// The `job_wait` call that collects `id`.
pub fn wait_call(id: &JobId) -> String {
    format!("job_wait {{\"job_ids\": [\"{id}\"]}}")
}

fn budgeted_answer<'a>(id: &JobId, answer: &'a str, budget: usize) -> std::borrow::Cow<'a, str> {
    head_and_tail(answer, budget, |omitted, from| {
        format!(
            "… {omitted} characters of the answer left out here; job_result {{\"job_id\": \
             \"{id}\", \"offset\": {from}, \"limit\": {omitted}}} returns them …"
        )
    })
}

fn tools_brief(outcome: &Outcome) -> ToolsBrief {
    let recent = &outcome.tools.recent;
    let latest = recent.len().saturating_sub(RECENT_TOOLS);
    ToolsBrief {
        calls: outcome.tools.calls,
        failed: outcome.tools.failed,
        recent: recent[latest..]
            .iter()
            .map(|call| {
                let what = call.command.as_deref().unwrap_or(&call.name);
                tail(what, 200).into_owned()
            })
            .collect(),
    }
}

/// The result of a call whose run could not start.
/// The result of a call whose run the jobs did not take: it did not start, or its tree was
/// refused (which says why in its own words).
pub fn refused(agent: Agent, refused: &Refused) -> CallToolResult {
    match refused {
        Refused::Tree(refusal) => error_result(refusal.to_string()),
        other => error_result(format!("{agent} did not start: {other}")),
    }
}

/// An error result of one text, secrets masked (an outcome's are masked by the engine).
pub fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(redact(&text))])
}

#[cfg(test)]
mod tests {
    use cli_agent_engine::Status;

    use super::*;

    fn finished(status: Status, answer: &str, error: Option<ErrorInfo>) -> Finished {
        let placeholder = ErrorInfo {
            kind: ErrorKind::AgentError,
            message: String::new(),
            hint: None,
        };
        let mut outcome = Outcome::not_run("codex", status, placeholder);
        outcome.answer = answer.to_owned();
        outcome.session_id = Some("s-1".to_owned());
        outcome.duration_ms = 1500;
        outcome.stderr_tail = "one\ntwo\nthree\n".to_owned();
        outcome.error = error;
        Finished {
            status: JobStatus::of(status),
            outcome,
        }
    }

    fn texts(result: &CallToolResult) -> Vec<String> {
        result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.clone()))
            .collect()
    }

    fn id() -> JobId {
        "job_abcdefghijklmnop".parse().expect("job id")
    }

    #[test]
    fn a_completed_run_answers_first_and_names_its_session_and_job() {
        let report =
            JobReport::finished(&id(), &finished(Status::Completed, "the answer", None), 100);
        let result = report.into_result();
        assert_eq!(result.is_error, Some(false));
        let texts = texts(&result);
        assert_eq!(texts[0], "the answer");
        assert!(texts[1].contains("session_id `s-1`"), "{}", texts[1]);
        assert!(texts[1].contains("job_abcdefghijklmnop"), "{}", texts[1]);
        let structured = result.structured_content.expect("structured");
        assert_eq!(structured["status"], "completed");
        assert!(structured.get("stderr_tail").is_none(), "only for failures");
    }

    #[test]
    fn a_crash_is_an_error_with_its_hint_and_stderr() {
        let error = ErrorInfo {
            kind: ErrorKind::Crashed,
            message: "codex exited with code 3".to_owned(),
            hint: Some("read stderr".to_owned()),
        };
        let report = JobReport::finished(&id(), &finished(Status::Failed, "", Some(error)), 100);
        let result = report.into_result();
        assert_eq!(result.is_error, Some(true));
        let first = &texts(&result)[0];
        assert!(first.starts_with("codex failed: codex exited with code 3\nhint: read stderr"));
        assert!(first.contains("```\none\ntwo\nthree\n```"), "{first}");
    }

    #[test]
    fn a_long_answer_keeps_head_and_tail_and_names_the_call_for_the_rest() {
        let answer = "a".repeat(600) + &"b".repeat(400);
        let report = JobReport::finished(&id(), &finished(Status::Completed, &answer, None), 100);
        let text = report.answer.clone().expect("answer");
        assert!(text.starts_with(&"a".repeat(50)) && text.ends_with(&"b".repeat(50)));
        assert!(
            text.contains(
                "job_result {\"job_id\": \"job_abcdefghijklmnop\", \"offset\": 50, \"limit\": 900}"
            ),
            "{text}"
        );
        assert_eq!(report.answer_chars, Some(1000));
    }

    #[test]
    fn an_unfinished_job_says_how_to_collect_it() {
        let report = JobReport::unfinished(
            &id(),
            "claude",
            JobStatus::Running,
            45,
            Some("running `cargo test`".to_owned()),
        );
        let result = report.into_result();
        assert_eq!(result.is_error, Some(false));
        let text = &texts(&result)[0];
        assert!(
            text.contains("job_wait {\"job_ids\": [\"job_abcdefghijklmnop\"]}"),
            "{text}"
        );
        let structured = result.structured_content.expect("structured");
        assert_eq!(structured["status"], "running");
        assert_eq!(structured["job_id"], "job_abcdefghijklmnop");
    }
}
