//! The live feeds, as server-sent events. Each open page has its own feed, which polls the
//! store in the blocking pool every [`POLL`] for what changed since it last looked (one indexed
//! query when nothing did) and sends only that. A feed ends with the page, or when the
//! dashboard stops.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::unfold;
use serde::Serialize;
use tokio::time::{Interval, MissedTickBehavior, interval};

use super::{DashboardError, DashboardState, markdown, pages};
use crate::jobs::store::{JobId, JobRecord, Store, StoreError, TextPage, now_ms};

const POLL: Duration = Duration::from_millis(500);
/// The jobs a page starts with: the newest.
const FIRST_JOBS: usize = 200;
/// The most changed jobs one message carries; more follow at the next poll.
const CHANGES: usize = 500;
/// Events per message of a job's transcript.
const LINES: u64 = 500;
/// The most of an answer rendered on the page; `jobs result` prints the whole.
const ANSWER_CHARS: u64 = 200_000;
/// Every this many polls, the jobs of servers that died are marked interrupted.
const ORPHAN_POLLS: u32 = 10;

/// `GET /events`: `snapshot` (the newest jobs), then `changed` (jobs inserted or updated).
pub async fn jobs_feed(State(state): State<DashboardState>) -> Response {
    let feed = JobsFeed {
        ticker: Ticker::new(&state),
        state,
        cursor: None,
        polls: 0,
    };
    sse(feed)
}

/// `GET /jobs/{id}/events`: `job` (its record, when it changed), `lines` (its events as
/// JSON lines, from `offset`), `answer` (rendered, once it ended), then `end`.
pub async fn job_feed(State(state): State<DashboardState>, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<JobId>() else {
        return pages::not_found().await;
    };
    let feed = JobFeed {
        ticker: Ticker::new(&state),
        state,
        id,
        pending: VecDeque::new(),
        shown: None,
        offset: 0,
        behind: false,
        answered: false,
        ended: false,
    };
    sse(feed)
}

/// A source of SSE messages.
trait Feed: Send + 'static {
    /// The next message; `None` ends the stream.
    fn next(&mut self) -> impl Future<Output = Option<Event>> + Send;
}

/// A feed as an SSE response.
fn sse(feed: impl Feed) -> Response {
    let stream = unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok::<_, Infallible>(event), feed))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The poll clock, which stops when the dashboard does.
struct Ticker {
    ticks: Interval,
    state: DashboardState,
}

impl Ticker {
    fn new(state: &DashboardState) -> Self {
        let mut ticks = interval(POLL);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Self {
            ticks,
            state: state.clone(),
        }
    }

    /// Waits for the next poll (the first at once); false once the dashboard stops.
    async fn wait(&mut self) -> bool {
        tokio::select! {
            _ = self.ticks.tick() => !self.state.shutdown().is_cancelled(),
            () = self.state.shutdown().cancelled() => false,
        }
    }
}

#[derive(Serialize)]
struct Jobs {
    now_ms: u64,
    jobs: Vec<JobRecord>,
}

struct JobsFeed {
    state: DashboardState,
    ticker: Ticker,
    /// The last change sent; `None` before the snapshot.
    cursor: Option<u64>,
    polls: u32,
}

impl Feed for JobsFeed {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if !self.ticker.wait().await {
                return None;
            }
            if let Some(event) = self.poll().await {
                return Some(event);
            }
        }
    }
}

impl JobsFeed {
    /// The message this poll has, if any.
    async fn poll(&mut self) -> Option<Event> {
        let cursor = self.cursor;
        let orphans = self.polls.is_multiple_of(ORPHAN_POLLS);
        self.polls = self.polls.wrapping_add(1);
        let page = self
            .state
            .query(move |store| {
                if orphans {
                    store.interrupt_orphans()?;
                }
                match cursor {
                    None => store.feed_start(FIRST_JOBS),
                    Some(cursor) => store.changed_since(cursor, CHANGES),
                }
            })
            .await;
        let page = match page {
            Ok(page) => page,
            Err(error) => return Some(trouble(&error)),
        };
        self.cursor = Some(page.cursor);
        let kind = match cursor {
            None => "snapshot",
            Some(_) if page.jobs.is_empty() => return None,
            Some(_) => "changed",
        };
        let jobs = Jobs {
            now_ms: now_ms(),
            jobs: page.jobs,
        };
        Some(message(kind, &jobs))
    }
}

struct JobFeed {
    state: DashboardState,
    ticker: Ticker,
    id: JobId,
    /// Messages of the last poll not yet sent.
    pending: VecDeque<Event>,
    /// The record last sent.
    shown: Option<JobRecord>,
    /// The next event of the transcript to send.
    offset: u64,
    /// More of the transcript is waiting: read on without waiting for the clock.
    behind: bool,
    answered: bool,
    ended: bool,
}

#[derive(Serialize)]
struct JobMessage<'a> {
    now_ms: u64,
    job: &'a JobRecord,
}

#[derive(Serialize)]
struct Lines {
    offset: u64,
    text: String,
}

/// An ended job's answer, rendered.
#[derive(Serialize)]
struct Answer {
    html: String,
    /// The whole answer's length, and how much of it is rendered.
    chars: u64,
    shown_chars: u64,
}

/// What one poll of a job read.
struct JobPoll {
    job: JobRecord,
    lines: Option<TextPage>,
    answer: Option<Answer>,
}

impl Feed for JobFeed {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(event);
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

impl JobFeed {
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
                self.pending.push_back(trouble_text(&gone.to_string()));
                self.ended = true;
            }
            Err(error) => self.pending.push_back(trouble(&error)),
        }
    }

    fn take(&mut self, read: JobPoll) {
        if self.shown.as_ref() != Some(&read.job) {
            let job = JobMessage {
                now_ms: now_ms(),
                job: &read.job,
            };
            self.pending.push_back(message("job", &job));
        }
        if let Some(page) = read.lines {
            let sent = !page.text.is_empty();
            self.behind = page.next_offset.is_some();
            let next = page
                .next_offset
                .unwrap_or(if sent { page.total } else { self.offset });
            if sent {
                let lines = Lines {
                    offset: self.offset,
                    text: page.text,
                };
                self.pending.push_back(message("lines", &lines));
            }
            self.offset = next;
        }
        if let Some(answer) = read.answer {
            self.pending.push_back(message("answer", &answer));
            self.answered = true;
        }
        if self.answered && !self.behind {
            self.pending
                .push_back(Event::default().event("end").data("{}"));
            self.ended = true;
        }
        self.shown = Some(read.job);
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

/// A named SSE message carrying `data` as JSON.
fn message(kind: &str, data: &impl Serialize) -> Event {
    Event::default()
        .event(kind)
        .json_data(data)
        .unwrap_or_else(|error| trouble_text(&format!("cannot encode a {kind} message: {error}")))
}

/// What went wrong reading the store; the feed goes on and the page shows it.
fn trouble(error: &DashboardError) -> Event {
    trouble_text(&error.to_string())
}

fn trouble_text(why: &str) -> Event {
    Event::default()
        .event("trouble")
        .json_data(serde_json::json!({ "message": why }))
        .unwrap_or_default()
}
