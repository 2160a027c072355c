//! The live feeds, as server-sent events. Each open page has its own feed, which polls the
//! store in the blocking pool every [`POLL`] for what changed since it last looked (one indexed
//! query when nothing did) and sends only that: the list's in `list.rs`, a job's in `job.rs`.
//! A feed ends with its page, or when the dashboard stops.

mod job;
mod list;

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::unfold;
use serde::Serialize;
use tokio::time::{Interval, MissedTickBehavior, interval};

use super::pages;
use super::state::DashboardState;
use crate::jobs::store::{JobId, JobRecord};

const POLL: Duration = Duration::from_millis(500);

/// `GET /events`: `snapshot` (the newest jobs), then `changed` (jobs inserted or updated), and
/// `worktrees` (their disk use) at first and whenever it changed.
pub async fn jobs_feed(State(state): State<DashboardState>) -> Response {
    sse(list::JobsFeed::new(state))
}

/// `GET /jobs/{id}/events`: `job` (its record, when it changed), `lines` (its events as
/// JSON lines, from `offset`), `answer` (rendered, once it ended), then `end`.
pub async fn job_feed(State(state): State<DashboardState>, Path(id): Path<String>) -> Response {
    match id.parse::<JobId>() {
        Ok(id) => sse(job::JobFeed::new(state, id)),
        Err(_) => pages::not_found().await,
    }
}

/// A source of messages.
trait Feed: Send + 'static {
    /// The next message; `None` ends the stream.
    fn next(&mut self) -> impl Future<Output = Option<Message>> + Send;
}

/// A feed as an SSE response.
fn sse(feed: impl Feed) -> Response {
    let stream = unfold(feed, |mut feed| async move {
        let message = feed.next().await?;
        Some((Ok::<_, Infallible>(message.into_event()), feed))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// What a feed sends: one SSE message each, named as the variant, its data as JSON.
#[derive(Debug)]
enum Message {
    Snapshot(Jobs),
    Changed(Jobs),
    Worktrees(Worktrees),
    Job(Box<JobNow>),
    Lines(Lines),
    Answer(Answer),
    End,
    /// The store could not be read, or the job is gone: the page shows why.
    Trouble(String),
}

/// Jobs, and the server's clock for their elapsed times.
#[derive(Debug, Serialize)]
struct Jobs {
    now_ms: u64,
    jobs: Vec<JobRecord>,
    /// How many the store holds, in a snapshot: the page says how many it leaves out.
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<u64>,
}

/// The disk the live worktrees take, in bytes: in all, and each job's.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct Worktrees {
    bytes: u64,
    jobs: Vec<WorktreeUse>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct WorktreeUse {
    id: JobId,
    bytes: u64,
}

/// One job, and the server's clock.
#[derive(Debug, Serialize)]
struct JobNow {
    now_ms: u64,
    job: JobRecord,
}

/// A job's events as JSON lines, the first of them event number `offset`.
#[derive(Debug, Serialize)]
struct Lines {
    offset: u64,
    text: String,
}

/// An ended job's answer, rendered.
#[derive(Debug, Serialize)]
struct Answer {
    html: String,
    /// The whole answer's length, and how much of it is rendered.
    chars: u64,
    shown_chars: u64,
}

impl Message {
    fn name(&self) -> &'static str {
        match self {
            Self::Snapshot(_) => "snapshot",
            Self::Changed(_) => "changed",
            Self::Worktrees(_) => "worktrees",
            Self::Job(_) => "job",
            Self::Lines(_) => "lines",
            Self::Answer(_) => "answer",
            Self::End => "end",
            Self::Trouble(_) => "trouble",
        }
    }

    fn into_event(self) -> Event {
        let event = Event::default().event(self.name());
        let data = match &self {
            Self::Snapshot(jobs) | Self::Changed(jobs) => event.json_data(jobs),
            Self::Worktrees(disk) => event.json_data(disk),
            Self::Job(job) => event.json_data(job),
            Self::Lines(lines) => event.json_data(lines),
            Self::Answer(answer) => event.json_data(answer),
            Self::End => event.json_data(serde_json::json!({})),
            Self::Trouble(message) => event.json_data(serde_json::json!({ "message": message })),
        };
        data.unwrap_or_else(|error| {
            Self::Trouble(format!("cannot encode a {} message: {error}", self.name())).into_event()
        })
    }
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
