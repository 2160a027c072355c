//! The list page's feed: the newest jobs, then each job as it is inserted or updated (the
//! store numbers every change, so a poll reads only what changed since the last one).

use super::{Feed, Jobs, Message, Ticker};
use crate::dashboard::state::DashboardState;
use crate::jobs::store::now_ms;

/// The jobs a page starts with: the newest.
const FIRST_JOBS: usize = 200;
/// The most changed jobs one message carries; more follow at the next poll.
const CHANGES: usize = 500;
/// Every this many polls, the jobs of servers that died are marked interrupted.
const ORPHAN_POLLS: u32 = 10;

pub struct JobsFeed {
    state: DashboardState,
    ticker: Ticker,
    /// The last change sent; `None` before the snapshot.
    cursor: Option<u64>,
    polls: u32,
}

impl JobsFeed {
    pub fn new(state: DashboardState) -> Self {
        Self {
            ticker: Ticker::new(&state),
            state,
            cursor: None,
            polls: 0,
        }
    }

    /// The message this poll has, if any.
    async fn poll(&mut self) -> Option<Message> {
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
            Err(error) => return Some(Message::Trouble(error.to_string())),
        };
        self.cursor = Some(page.cursor);
        let jobs = Jobs {
            now_ms: now_ms(),
            jobs: page.jobs,
            total: page.total,
        };
        match cursor {
            None => Some(Message::Snapshot(jobs)),
            Some(_) if jobs.jobs.is_empty() => None,
            Some(_) => Some(Message::Changed(jobs)),
        }
    }
}

impl Feed for JobsFeed {
    async fn next(&mut self) -> Option<Message> {
        loop {
            if !self.ticker.wait().await {
                return None;
            }
            if let Some(message) = self.poll().await {
                return Some(message);
            }
        }
    }
}
