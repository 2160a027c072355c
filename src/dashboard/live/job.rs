//! A job page's feed: its record whenever it changes, its events from where the page is (a
//! page at a time, without waiting for the clock while behind), and once it has ended its
//! answer rendered from markdown; then the feed ends.

use std::collections::VecDeque;

use super::{Answer, Feed, JobNow, Lines, Message, Ticker};
use crate::dashboard::{DashboardState, markdown};
use crate::jobs::store::{JobId, JobRecord, Store, StoreError, TextPage, now_ms};

/// Events per message.
const LINES: u64 = 500;
/// The most of an answer rendered on the page; `jobs result` prints the whole.
const ANSWER_CHARS: u64 = 200_000;

pub struct JobFeed {
    state: DashboardState,
    ticker: Ticker,
    id: JobId,
    /// Messages of the last poll not yet sent.
    pending: VecDeque<Message>,
    /// The record last sent.
    shown: Option<JobRecord>,
    /// The next event of the transcript to send.
    offset: u64,
    /// More of the transcript is waiting: read on without waiting for the clock.
    behind: bool,
    answered: bool,
    ended: bool,
}

/// What one poll of a job read.
struct JobPoll {
    job: JobRecord,
    lines: Option<TextPage>,
    answer: Option<Answer>,
}

impl JobFeed {
    pub fn new(state: DashboardState, id: JobId) -> Self {
        Self {
            ticker: Ticker::new(&state),
            state,
            id,
            pending: VecDeque::new(),
            shown: None,
            offset: 0,
            behind: false,
            answered: false,
            ended: false,
        }
    }

    async fn poll(&mut self) {
        let (id, offset, answer) = (self.id.clone(), self.offset, !self.answered);
        let read = self
            .state
            .query(move |store| JobPoll::read(store, &id, offset, answer))
            .await;
        match read {
            Ok(Some(read)) => self.take(read),
            Ok(None) => {
                let gone = self.state.store().unknown_job(&self.id);
                self.pending.push_back(Message::Trouble(gone.to_string()));
                self.ended = true;
            }
            Err(error) => self.pending.push_back(Message::Trouble(error.to_string())),
        }
    }

    fn take(&mut self, read: JobPoll) {
        if self.shown.as_ref() != Some(&read.job) {
            self.shown = Some(read.job.clone());
            self.pending.push_back(Message::Job(Box::new(JobNow {
                now_ms: now_ms(),
                job: read.job,
            })));
        }
        self.behind = read
            .lines
            .as_ref()
            .is_some_and(|page| page.next_offset.is_some());
        if let Some(page) = read.lines.filter(|page| !page.text.is_empty()) {
            let next = page.next_offset.unwrap_or(page.total);
            self.pending.push_back(Message::Lines(Lines {
                offset: self.offset,
                text: page.text,
            }));
            self.offset = next;
        }
        if let Some(answer) = read.answer {
            self.pending.push_back(Message::Answer(answer));
            self.answered = true;
        }
        if self.answered && !self.behind {
            self.pending.push_back(Message::End);
            self.ended = true;
        }
    }
}

impl Feed for JobFeed {
    async fn next(&mut self) -> Option<Message> {
        loop {
            if let Some(message) = self.pending.pop_front() {
                return Some(message);
            }
            if self.ended || self.state.shutdown().is_cancelled() {
                return None;
            }
            if !self.behind && !self.ticker.wait().await {
                return None;
            }
            self.poll().await;
        }
    }
}

impl JobPoll {
    /// The job, its events from `offset` if there are more, and its answer if it has ended and
    /// `answer` is asked for; `None` for a job the store does not hold (any more).
    fn read(
        store: &Store,
        id: &JobId,
        offset: u64,
        answer: bool,
    ) -> Result<Option<Self>, StoreError> {
        let Some(job) = store.get(id)? else {
            return Ok(None);
        };
        let events = job.transcript.events + job.transcript.dropped_events;
        let lines = match events > offset {
            true => store.transcript_page(id, offset, LINES)?,
            false => None,
        };
        let answer = match answer && job.status.is_finished() {
            true => store.answer_page(id, 0, ANSWER_CHARS)?.map(|page| Answer {
                html: markdown::render(&page.text),
                chars: page.total,
                shown_chars: page.total.min(ANSWER_CHARS),
            }),
            false => None,
        };
        Ok(Some(Self { job, lines, answer }))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cli_agent_engine::{AgentEvent, AgentKind, Outcome, Permission, Status};
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::jobs::store::{JobStatus, NewJob, Origin};

    /// A store in a fresh temp dir holding one completed job of `events` events and `answer`.
    fn store_with_job(dir: &std::path::Path, events: usize, answer: &str) -> (Store, JobId) {
        let store = Store::open(dir).unwrap();
        let id = JobId::random();
        store
            .insert(&NewJob {
                id: &id,
                agent: AgentKind::Codex,
                origin: Origin::Background,
                workspace: dir,
                permission: Permission::ReadOnly,
                model: None,
                session_id: None,
                prompt: "p",
                status: JobStatus::Running,
            })
            .unwrap();
        let recorder = store.recorder(&id);
        for n in 0..events {
            recorder.event(&AgentEvent::Reasoning {
                text: format!("step {n}"),
            });
        }
        recorder.flush();
        let mut outcome = Outcome::not_run(
            AgentKind::Codex,
            Status::Completed,
            cli_agent_engine::ErrorInfo {
                kind: cli_agent_engine::ErrorKind::AgentError,
                message: String::new(),
                hint: None,
            },
        );
        outcome.error = None;
        outcome.answer = answer.to_owned();
        store.finish(&id, JobStatus::Completed, &outcome).unwrap();
        (store, id)
    }

    #[tokio::test]
    async fn an_ended_jobs_answer_comes_at_once_and_its_long_transcript_a_page_at_a_time() {
        let dir = std::env::temp_dir().join(format!("dash-feed-{}", JobId::random()));
        let (store, id) = store_with_job(&dir, 1200, "**done** <b>raw</b>");
        let state = DashboardState::new(store, Vec::new(), CancellationToken::new()).unwrap();
        let mut feed = JobFeed::new(state, id.clone());
        let mut messages = Vec::new();
        let all = async {
            while let Some(message) = feed.next().await {
                messages.push(message);
            }
        };
        tokio::time::timeout(Duration::from_secs(60), all)
            .await
            .expect("the feed of an ended job ends");
        let _ = std::fs::remove_dir_all(&dir);

        let names: Vec<&str> = messages.iter().map(Message::name).collect();
        assert_eq!(names, ["job", "lines", "answer", "lines", "lines", "end"]);
        let Message::Job(job) = &messages[0] else {
            unreachable!()
        };
        assert_eq!((&job.job.id, job.job.status), (&id, JobStatus::Completed));
        let mut next = 0;
        for message in [&messages[1], &messages[3], &messages[4]] {
            let Message::Lines(lines) = message else {
                unreachable!()
            };
            assert_eq!(lines.offset, next);
            for line in lines.text.lines() {
                let event: serde_json::Value = serde_json::from_str(line).unwrap();
                assert_eq!(event["text"], format!("step {next}"));
                next += 1;
            }
        }
        assert_eq!(next, 1200);
        let Message::Answer(answer) = &messages[2] else {
            unreachable!()
        };
        assert_eq!(
            answer.html,
            "<p><strong>done</strong> &lt;b&gt;raw&lt;/b&gt;</p>\n"
        );
        assert_eq!((answer.chars, answer.shown_chars), (19, 19));
    }
}
