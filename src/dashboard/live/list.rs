//! The list page's feed: the newest jobs, then each job as it is inserted or updated (the
//! store numbers every change, so a poll reads only what changed since the last one); and
//! the disk the kept worktrees take, now and then (walking them costs more than a poll).

use std::collections::VecDeque;

use cli_agent_engine::git::disk_usage;

use super::{Feed, Jobs, Message, Ticker, WorktreeUse, Worktrees};
use crate::dashboard::state::DashboardState;
use crate::jobs::store::{Store, StoreError, now_ms};

/// The jobs a page starts with: the newest.
const FIRST_JOBS: usize = 200;
/// The most changed jobs one message carries; more follow at the next poll.
const CHANGES: usize = 500;
/// Every this many polls, the jobs of servers that died are marked interrupted.
const ORPHAN_POLLS: u32 = 10;
/// Every this many polls, the worktrees' disk use is measured again.
const DISK_POLLS: u32 = 20;

pub struct JobsFeed {
    state: DashboardState,
    ticker: Ticker,
    /// The last change sent; `None` before the snapshot.
    cursor: Option<u64>,
    polls: u32,
    /// Messages of the last poll not yet sent.
    pending: VecDeque<Message>,
    /// The disk use last sent.
    disk: Option<Worktrees>,
}

impl JobsFeed {
    pub fn new(state: DashboardState) -> Self {
        Self {
            ticker: Ticker::new(&state),
            state,
            cursor: None,
            polls: 0,
            pending: VecDeque::new(),
            disk: None,
        }
    }

    /// Queues what this poll has: the jobs that changed, and now and then the disk use.
    async fn poll(&mut self) {
        let measure = self.polls.is_multiple_of(DISK_POLLS);
        if let Some(message) = self.jobs().await {
            self.pending.push_back(message);
        }
        if measure {
            let disk = self.disk().await;
            self.pending.extend(disk);
        }
    }

    /// The jobs that changed since the last poll, if any.
    async fn jobs(&mut self) -> Option<Message> {
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

    /// The worktrees' disk use, when it differs from what was sent.
    async fn disk(&mut self) -> Option<Message> {
        let disk = match self.state.query(measure_worktrees).await {
            Ok(disk) => disk,
            Err(error) => return Some(Message::Trouble(error.to_string())),
        };
        if self.disk.as_ref() == Some(&disk) {
            return None;
        }
        self.disk = Some(disk.clone());
        Some(Message::Worktrees(disk))
    }
}

/// The disk each live worktree takes (running jobs' and those kept for review).
fn measure_worktrees(store: &Store) -> Result<Worktrees, StoreError> {
    let jobs: Vec<WorktreeUse> = store
        .live_worktrees()?
        .into_iter()
        .map(|(id, path)| WorktreeUse {
            bytes: disk_usage(&path),
            id,
        })
        .collect();
    Ok(Worktrees {
        bytes: jobs.iter().map(|job| job.bytes).sum(),
        jobs,
    })
}

impl Feed for JobsFeed {
    async fn next(&mut self) -> Option<Message> {
        loop {
            if let Some(message) = self.pending.pop_front() {
                return Some(message);
            }
            if !self.ticker.wait().await {
                return None;
            }
            self.poll().await;
        }
    }
}
