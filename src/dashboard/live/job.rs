//! A job page's feed: its record whenever it changes, its events from where the page is (a
//! page at a time, without waiting for the clock while behind), and once it has ended its
//! answer rendered from markdown; then the feed ends.

use std::collections::VecDeque;

use super::{Answer, Feed, JobNow, Lines, Message, Ticker};
use crate::dashboard::markdown;
use crate::dashboard::state::DashboardState;
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
#[path = "job_tests.rs"]
mod tests;
