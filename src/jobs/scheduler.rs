//! Caps on how many runs go at once, overall and per agent, and the FIFO queue of the rest.
//!
//! A run waits in the queue until it is the oldest waiter whose agent has room while the
//! total has room; a waiter held back by its agent's cap does not hold back other agents.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use cli_agent_engine::Agent;
use tokio::sync::{oneshot, watch};

/// The most runs at once: overall, and for the agents that have a cap of their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caps {
    pub total: usize,
    pub per_agent: HashMap<Agent, usize>,
    /// The most worktrees of isolated jobs at once (kept ones count until discarded).
    pub worktrees: usize,
}

impl Caps {
    fn room_for(&self, agent: Agent, running: &Running) -> bool {
        running.total < self.total
            && self
                .per_agent
                .get(&agent)
                .is_none_or(|cap| running.of(agent) < *cap)
    }
}

#[derive(Default)]
struct Running {
    total: usize,
    per_agent: HashMap<Agent, usize>,
}

impl Running {
    fn of(&self, agent: Agent) -> usize {
        self.per_agent.get(&agent).copied().unwrap_or(0)
    }

    fn add(&mut self, agent: Agent) {
        self.total += 1;
        *self.per_agent.entry(agent).or_default() += 1;
    }

    fn remove(&mut self, agent: Agent) {
        self.total -= 1;
        if let Some(count) = self.per_agent.get_mut(&agent) {
            *count -= 1;
        }
    }
}

struct Waiter {
    ticket: u64,
    agent: Agent,
    admit: oneshot::Sender<()>,
    /// 1-based place in the queue.
    position: watch::Sender<usize>,
}

struct State {
    caps: Caps,
    running: Running,
    queue: VecDeque<Waiter>,
    next_ticket: u64,
}

/// Shared by every run of a server. Cheap to clone.
#[derive(Clone)]
pub struct Scheduler {
    state: Arc<Mutex<State>>,
}

/// Leave to run: holding it counts against the caps; dropping it lets the next waiter in.
pub struct Permit {
    scheduler: Scheduler,
    agent: Agent,
}

/// A place in the queue; dropping it (a cancelled wait) gives the place up.
pub struct Ticket {
    scheduler: Scheduler,
    ticket: u64,
    agent: Agent,
    admitted: oneshot::Receiver<()>,
    /// The place in the queue as it changes; 0 once admitted.
    pub position: watch::Receiver<usize>,
}

impl Scheduler {
    pub fn new(caps: Caps) -> Self {
        let state = State {
            caps,
            running: Running::default(),
            queue: VecDeque::new(),
            next_ticket: 0,
        };
        Self {
            state: Arc::new(Mutex::new(state)),
        }
    }

    pub fn max_worktrees(&self) -> usize {
        self.lock().caps.worktrees
    }

    /// Join the queue. Admission may be immediate; [`Ticket::admitted`] waits for it.
    pub fn enqueue(&self, agent: Agent) -> Ticket {
        let (admit, admitted) = oneshot::channel();
        let mut state = self.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        let (position, watch_position) = watch::channel(state.queue.len() + 1);
        state.queue.push_back(Waiter {
            ticket,
            agent,
            admit,
            position,
        });
        admit_waiters(&mut state);
        Ticket {
            scheduler: self.clone(),
            ticket,
            agent,
            admitted,
            position: watch_position,
        }
    }

    /// How many runs are going now.
    #[cfg(test)]
    fn running(&self) -> usize {
        self.lock().running.total
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every change is made whole under the lock: a panicking holder leaves it consistent.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Let in every waiter, oldest first, that fits the caps; renumber the rest.
fn admit_waiters(state: &mut State) {
    let State {
        caps,
        running,
        queue,
        ..
    } = state;
    let mut kept = VecDeque::with_capacity(queue.len());
    for waiter in queue.drain(..) {
        if caps.room_for(waiter.agent, running) {
            running.add(waiter.agent);
            let _ = waiter.position.send(0);
            // A waiter gone since it queued gives its place back when its ticket drops.
            let _ = waiter.admit.send(());
        } else {
            let _ = waiter.position.send(kept.len() + 1);
            kept.push_back(waiter);
        }
    }
    *queue = kept;
}

impl Ticket {
    /// Wait for admission. Dropping the future (a cancelled job) gives the place up.
    pub async fn admitted(mut self) -> Permit {
        // The sender lives in the queue until it admits us, and the queue outlives the ticket.
        let _ = (&mut self.admitted).await;
        let permit = Permit {
            scheduler: self.scheduler.clone(),
            agent: self.agent,
        };
        // Admitted: the ticket's drop must not count this run as queued any more.
        self.ticket = u64::MAX;
        permit
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.ticket == u64::MAX {
            return;
        }
        let mut state = self.scheduler.lock();
        let before = state.queue.len();
        state.queue.retain(|waiter| waiter.ticket != self.ticket);
        if state.queue.len() == before {
            // Admitted in the meantime: the run never started, so its room is free again.
            state.running.remove(self.agent);
        }
        admit_waiters(&mut state);
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut state = self.scheduler.lock();
        state.running.remove(self.agent);
        admit_waiters(&mut state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cli_agent_engine::clis::{CLAUDE, CODEX, GEMINI};

    fn scheduler(total: usize, per_agent: &[(Agent, usize)]) -> Scheduler {
        Scheduler::new(Caps {
            total,
            per_agent: per_agent.iter().copied().collect(),
            worktrees: 20,
        })
    }

    #[tokio::test]
    async fn runs_over_the_cap_wait_in_order_and_start_as_others_end() {
        let scheduler = scheduler(2, &[]);
        let first = scheduler.enqueue(CODEX).admitted().await;
        let second = scheduler.enqueue(CLAUDE).admitted().await;
        let third = scheduler.enqueue(CODEX);
        let fourth = scheduler.enqueue(GEMINI);
        assert_eq!(*third.position.borrow(), 1);
        assert_eq!(*fourth.position.borrow(), 2);
        assert_eq!(scheduler.running(), 2);

        drop(first);
        assert_eq!(*fourth.position.borrow(), 1, "moved up");
        let third = third.admitted().await;
        drop(second);
        let fourth = fourth.admitted().await;
        assert_eq!(scheduler.running(), 2);
        drop((third, fourth));
        assert_eq!(scheduler.running(), 0);
    }

    #[tokio::test]
    async fn an_agent_at_its_own_cap_does_not_hold_back_the_others() {
        let scheduler = scheduler(3, &[(CODEX, 1)]);
        let codex = scheduler.enqueue(CODEX).admitted().await;
        let second_codex = scheduler.enqueue(CODEX);
        let claude = scheduler.enqueue(CLAUDE);
        assert_eq!(*second_codex.position.borrow(), 1);
        assert_eq!(*claude.position.borrow(), 0, "admitted past the held codex");
        let _claude = claude.admitted().await;
        drop(codex);
        let _second = second_codex.admitted().await;
        assert_eq!(scheduler.running(), 2);
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_frees_its_place() {
        let scheduler = scheduler(1, &[]);
        let running = scheduler.enqueue(CODEX).admitted().await;
        let gives_up = scheduler.enqueue(CODEX);
        let next = scheduler.enqueue(CODEX);
        drop(gives_up);
        assert_eq!(*next.position.borrow(), 1);
        drop(running);
        let _next = next.admitted().await;
        assert_eq!(scheduler.running(), 1);
    }

    #[tokio::test]
    async fn a_waiter_admitted_but_dropped_before_running_frees_its_room() {
        let scheduler = scheduler(1, &[]);
        let running = scheduler.enqueue(CODEX).admitted().await;
        let waiter = scheduler.enqueue(CODEX);
        drop(running);
        assert_eq!(scheduler.running(), 1, "admitted");
        drop(waiter);
        assert_eq!(scheduler.running(), 0);
    }
}
