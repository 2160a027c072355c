//! A question put to the person (never the model) on a run's behalf, and its answer: the
//! engine only carries it in the event stream; whoever asks (the MCP server, by elicitation)
//! records it in the run's transcript.

use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use serde::Serialize;
use tokio::time::Instant;

/// One question and its answer, as a transcript event.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PersonQuestion {
    /// What the person was asked about.
    #[serde(flatten)]
    pub about: QuestionAbout,
    /// The answer.
    pub answer: PersonAnswer,
    /// The client through which the person answered; `None` when nobody did (the server
    /// answered itself: denied without asking, nobody to ask, no answer in time).
    pub answered_by: Option<String>,
    /// Why the server answered as it did, when it answered itself or asking failed.
    pub why: Option<String>,
}

/// What the person was asked about.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "about", rename_all = "snake_case")]
pub enum QuestionAbout {
    /// The agent asked to use a tool its call's permission level does not give it.
    ToolPermission {
        /// The tool, in the CLI's name for it.
        tool: String,
        /// The tool's input, cut short.
        input: String,
    },
    /// The call went past the server's bounds, in the words the person was asked in.
    ServerBounds {
        /// The bounds it went past.
        bounds: String,
    },
}

/// How the question was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PersonAnswer {
    /// The person allowed it.
    Allowed,
    /// The person declined it.
    Declined,
    /// The person dismissed the question without answering.
    Cancelled,
    /// Nobody answered in time.
    TimedOut,
    /// What the call's level or the server forbids outright: nobody was asked.
    DeniedWithoutAsking,
    /// No client could put the question to the person.
    NobodyToAsk,
}

impl PersonAnswer {
    /// As the transcript and status lines say it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Declined => "declined",
            Self::Cancelled => "cancelled",
            Self::TimedOut => "timed out",
            Self::DeniedWithoutAsking => "denied without asking",
            Self::NobodyToAsk => "nobody to ask",
        }
    }
}

/// Whether a run waits on the person (a question put to them, or parked for their answer), so
/// that the CLI's silence meanwhile does not count against its idle limit. Clones share one
/// state: the run holds one, whoever asks another.
#[derive(Clone, Debug, Default)]
pub struct PersonWait(Arc<Mutex<WaitState>>);

#[derive(Debug, Default)]
struct WaitState {
    /// Questions waiting now.
    waiting: usize,
    /// When the last one was answered.
    last_ended: Option<Instant>,
}

impl PersonWait {
    /// The run waits on the person until the guard is dropped.
    pub fn begin(&self) -> Waiting {
        self.lock().waiting += 1;
        Waiting(self.clone())
    }

    /// When the run's silence began, given when its CLI last said anything: `None` while it
    /// waits on the person, else the later of that and the last answer.
    pub fn quiet_since(&self, last_news: Instant) -> Option<Instant> {
        let state = self.lock();
        (state.waiting == 0).then(|| state.last_ended.map_or(last_news, |at| at.max(last_news)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WaitState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A wait on the person, until dropped.
#[derive(Debug)]
pub struct Waiting(PersonWait);

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.waiting -= 1;
        state.last_ended = Some(Instant::now());
    }
}

/// How a denial sent back to a CLI starts; the rest names what was denied and why.
const DENIAL: &str = "cli-agent-mcp denied ";
/// Where a denial's how-to-allow part starts.
const HOW_TO_ALLOW: &str = ". To allow it, ";

/// The message a CLI gets for a request it was denied: what, why and how to allow it. The
/// engine finds it again in the tool's result (see [`denial_in`]), so the run's warnings name
/// every denial even when the agent does not repeat it.
pub fn denial_message(asked: &str, why: &str, how_to_allow: &str) -> String {
    format!("{DENIAL}{asked}: {why}{HOW_TO_ALLOW}{how_to_allow}")
}

/// A denial made with [`denial_message`] in a line of the CLI's output (the tool's result,
/// JSON-escaped as the CLI wrote it): `"cli-agent-mcp denied <what>: <why>"`.
pub fn denial_in(line: &str) -> Option<String> {
    // Searched for in every tool's end: a finder made once, not at each search.
    static FINDER: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(DENIAL));
    let rest = &line[FINDER.find(line.as_bytes())?..];
    let end = rest.find(HOW_TO_ALLOW)?;
    Some(rest[..end].replace("\\\"", "\"").replace("\\\\", "\\"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_silence_of_a_run_waiting_on_the_person_starts_when_the_last_answer_came() {
        let wait = PersonWait::default();
        let news = Instant::now();
        assert_eq!(wait.quiet_since(news), Some(news));
        let first = wait.begin();
        let second = wait.begin();
        assert_eq!(wait.quiet_since(news), None);
        drop(first);
        assert_eq!(wait.quiet_since(news), None, "one still waits");
        drop(second);
        let since = wait.quiet_since(news).expect("none waits");
        assert!(since >= news, "from the last answer");
        let later = Instant::now() + std::time::Duration::from_secs(5);
        assert_eq!(
            wait.quiet_since(later),
            Some(later),
            "news after the answer"
        );
    }

    #[test]
    fn a_denial_is_found_again_in_the_json_line_the_cli_writes() {
        let message = denial_message(
            "claude's Bash `echo \"hi\"`",
            "the person declined",
            "call with a higher permission level",
        );
        let line = serde_json::json!({"type": "user", "content": [{"content": message}]});

        assert_eq!(
            denial_in(&line.to_string()).as_deref(),
            Some("cli-agent-mcp denied claude's Bash `echo \"hi\"`: the person declined")
        );
        assert_eq!(denial_in(r#"{"content":"permission denied"}"#), None);
    }
}
