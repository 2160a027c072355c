//! Every run of a server is a job: recorded in the store, admitted by the scheduler, run by the
//! engine in a task of its own, and kept here while it lives so that calls can wait for it,
//! watch it and stop it. A job outlives the call that started it: a blocking call may hand it
//! off and answer, and the job carries on until it ends or the server goes.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use cli_agent_engine::{
    Agent, AgentEvent, Engine, ErrorInfo, ErrorKind, Outcome, PersonQuestion, Placed, Prepared,
    SetupError, Status,
};
use tokio::sync::futures::Notified;
use tokio::sync::{Notify, broadcast};
use tokio::task::JoinError;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::changes::{ChangeFeed, JobChange};
use super::in_place::InPlaceRuns;
use super::job::{AskFirst, Finished, Job, JobState, StopReason};
use super::scheduler::{Permit, Scheduler, Ticket};
use super::store::{JobId, JobStatus, NewJob, Origin, Owner, Recorder, Store, StoreError};

/// How many finished jobs stay in memory when the store is unusable, for `job_wait`.
const FINISHED_KEPT: usize = 64;
/// How often the store's copy of a job's progress line is refreshed, and cancel requests from
/// shells and other servers are looked for.
pub const STORE_POLL: Duration = Duration::from_millis(500);

#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    #[error(
        "the job store is unusable ({0}), so jobs cannot be recorded or looked up; blocking \
         calls still work. Fix the problem (or set CAM_STATE_DIR to a writable directory) and \
         restart the server"
    )]
    StoreUnusable(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no job {0}: job ids come from a background call's result or from job_list")]
    Unknown(JobId),
    #[error("looking a job up failed: {0}")]
    Lookup(String),
}

pub struct Jobs {
    engine: Arc<Engine>,
    /// The store, or why it is unusable (then jobs are not recorded, and runs go on).
    store: Result<Store, String>,
    scheduler: Scheduler,
    owner: Owner,
    runs: TaskTracker,
    /// The parent of every job's token: cancelled when the server shuts down.
    shutdown: CancellationToken,
    live: Mutex<Live>,
    /// Woken whenever a job of this server ends, or starts or stops waiting on the person.
    ended_or_parked: Notify,
    /// Every job added, started or ended, for the resource subscriptions.
    changes: ChangeFeed,
    pub(super) in_place: InPlaceRuns,
}

#[derive(Default)]
struct Live {
    jobs: HashMap<JobId, Arc<Job>>,
    finished: VecDeque<JobId>,
}

/// What a caller asks of a job beyond its run.
#[derive(Debug, Default)]
pub struct JobOptions {
    /// Append the whole answer to this file once the job ends.
    pub save_to: Option<PathBuf>,
    /// The bounds the person let this call past when asked, in their words.
    pub allowed_past: Option<String>,
    /// Questions the person answered before the job existed: its transcript's first events.
    pub asked_before: Vec<PersonQuestion>,
    /// What the person must allow on the dashboard before the job may start.
    pub ask_first: Option<AskFirst>,
    /// Shown the run's events as they come, besides the job's record of them.
    pub watch: Option<EventWatch>,
}

/// Whoever else wants a run's events as they come (`run`'s status line).
pub struct EventWatch(Box<Watcher>);

type Watcher = dyn FnMut(&[AgentEvent]) + Send;

impl EventWatch {
    pub fn new(watch: impl FnMut(&[AgentEvent]) + Send + 'static) -> Self {
        Self(Box::new(watch))
    }
}

impl std::fmt::Debug for EventWatch {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("EventWatch")
    }
}

impl Jobs {
    pub fn new(
        engine: Arc<Engine>,
        store: Result<Store, String>,
        scheduler: Scheduler,
        runs: TaskTracker,
        shutdown: CancellationToken,
    ) -> Arc<Self> {
        Arc::new(Self {
            engine,
            store,
            scheduler,
            owner: Owner::this_process(),
            runs,
            shutdown,
            live: Mutex::default(),
            ended_or_parked: Notify::new(),
            changes: ChangeFeed::default(),
            in_place: InPlaceRuns::default(),
        })
    }

    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The most worktrees of isolated jobs that may exist at once.
    pub fn max_worktrees(&self) -> usize {
        self.scheduler.max_worktrees()
    }

    /// The store, or why it is unusable.
    pub fn store(&self) -> Result<Store, JobsError> {
        self.store.clone().map_err(JobsError::StoreUnusable)
    }

    /// The store, or why it is unusable, in the store's words.
    pub(super) fn store_or_problem(&self) -> Result<&Store, &str> {
        self.store.as_ref().map_err(String::as_str)
    }

    /// The recorder of job `id`'s transcript (which may not exist yet), if the store is usable.
    pub fn transcript(&self, id: &JobId) -> Option<Recorder> {
        Some(self.store.as_ref().ok()?.recorder(id))
    }

    /// Whether the server is shutting down: then no new job is taken.
    pub fn shutting_down(&self) -> bool {
        self.shutdown.is_cancelled()
    }

    /// Record a prepared run as job `id` and start it (or queue it) in a task of its own.
    pub(super) async fn start(
        self: &Arc<Self>,
        id: JobId,
        prepared: Prepared,
        origin: Origin,
        mut options: JobOptions,
    ) -> Arc<Job> {
        let (agent, request) = (prepared.agent(), prepared.request().clone());
        let job = Arc::new(Job::new(id, agent, self.shutdown.child_token()));
        let id = job.id.clone();
        let allowed_past = options.allowed_past.clone();
        // Recorded before the call answers: the id it hands out must resolve.
        self.record(move |store| {
            store.insert(&NewJob {
                id: &id,
                agent,
                origin,
                workspace: &request.workspace,
                permission: request.permission,
                model: request.model.as_deref(),
                // A fork's session is a new one, known once the CLI names it.
                session_id: request.session_id.as_deref().filter(|_| !request.fork),
                prompt: &request.prompt,
                status: JobStatus::Queued,
                allowed_past: allowed_past.as_deref(),
            })
        })
        .await;
        let asked: Vec<_> = options
            .asked_before
            .drain(..)
            .map(AgentEvent::Question)
            .collect();
        if !asked.is_empty()
            && let Some(transcript) = self.transcript(&job.id)
        {
            transcript.events(&asked);
        }
        // In the queue in the order the jobs came, whichever of their tasks runs first; a job
        // that asks the person first joins it once they have allowed it.
        let ticket = options
            .ask_first
            .is_none()
            .then(|| self.scheduler.enqueue(agent));
        self.lock().jobs.insert(job.id.clone(), job.clone());
        self.changes.send(JobChange::Added(job.id.clone()));
        self.runs
            .spawn(self.clone().drive(job.clone(), prepared, options, ticket));
        job
    }

    /// A job of this server, running or recently finished.
    pub fn live(&self, id: &JobId) -> Option<Arc<Job>> {
        self.lock().jobs.get(id).cloned()
    }

    /// Resolves when a job of this server ends, or starts or stops waiting on the person
    /// (enable it before looking at the jobs).
    pub fn ended_or_parked(&self) -> Notified<'_> {
        self.ended_or_parked.notified()
    }

    /// Wake whoever waits on `job` or watches this server's jobs: it changed state.
    pub(super) fn tell_waiters(&self, job: &Job) {
        self.ended_or_parked.notify_waiters();
        self.changes.send(JobChange::Updated(job.id.clone()));
    }

    /// Hears of every job of this server added, started or ended from now on.
    pub fn changes(&self) -> broadcast::Receiver<JobChange> {
        self.changes.subscribe()
    }

    /// Stop every unfinished job of this server; returns how many there were.
    pub fn stop_all(&self, reason: StopReason) -> usize {
        let live = self.lock();
        let unfinished = live
            .jobs
            .values()
            .filter(|job| !matches!(job.state(), JobState::Finished(_)));
        unfinished.map(|job| job.stop(reason)).count()
    }

    /// How many jobs of this server are queued or running.
    pub fn unfinished(&self) -> usize {
        let live = self.lock();
        live.jobs.len() - live.finished.len()
    }

    /// The life of one job: the queue, the run, the record of its end. The run is a task of
    /// its own so that a panic in it (a bug) still ends the job, as a failure.
    async fn drive(
        self: Arc<Self>,
        job: Arc<Job>,
        prepared: Prepared,
        mut options: JobOptions,
        ticket: Option<Ticket>,
    ) {
        let first = First {
            ask: options.ask_first.take(),
            ticket,
        };
        let watch = options.watch.take();
        let admit_and_run = self
            .clone()
            .admit_and_run(job.clone(), prepared, first, watch);
        let run = tokio::spawn(admit_and_run);
        let outcome = run.await.unwrap_or_else(|error| panicked(&job, error));
        self.finish(&job, outcome, options).await;
    }

    async fn admit_and_run(
        self: Arc<Self>,
        job: Arc<Job>,
        prepared: Prepared,
        first: First,
        watch: Option<EventWatch>,
    ) -> Outcome {
        if let Some(ask) = first.ask
            && let Err(never_ran) = self.ask_first(&job, ask).await
        {
            return never_ran;
        }
        let ticket = first
            .ticket
            .unwrap_or_else(|| self.scheduler.enqueue(job.agent));
        let Some(permit) = self.admit(&job, ticket).await else {
            return not_run(&job);
        };
        debug_panic(&prepared.request().prompt);
        let outcome = self.run(&job, prepared, watch).await;
        drop(permit);
        outcome
    }

    /// Wait for `ticket`'s room to run, saying where in the queue the job is; `None` if it
    /// was stopped.
    async fn admit(&self, job: &Job, ticket: Ticket) -> Option<Permit> {
        let mut position = ticket.position.clone();
        let admitted = ticket.admitted();
        tokio::pin!(admitted);
        loop {
            let place = *position.borrow_and_update();
            if place > 0 {
                job.progress.set(format!("queued, position {place}"));
            }
            tokio::select! {
                biased;
                () = job.cancel_token().cancelled() => return None,
                permit = &mut admitted => return Some(permit),
                Ok(()) = position.changed() => {}
            }
        }
    }

    async fn run(&self, job: &Job, prepared: Prepared, watch: Option<EventWatch>) -> Outcome {
        job.set_state(JobState::Running);
        job.progress.set("started".to_owned());
        let id = job.id.clone();
        self.record(move |store| store.mark_running(&id)).await;
        self.changes.send(JobChange::Updated(job.id.clone()));
        let (placed, in_place) = match self.place(&job.id, prepared).await {
            Ok(placed) => placed,
            Err(error) => return did_not_start(job.agent, &error),
        };
        let recorder = self.transcript(&job.id);
        let result = self
            .run_observed(job, placed, recorder.as_ref(), watch)
            .await;
        if let Some(recorder) = recorder {
            if let Some(line) = job.progress.line() {
                recorder.progress(&line);
            }
            let flushed = tokio::task::spawn_blocking(move || recorder.flush()).await;
            if let Err(error) = flushed {
                tracing::warn!(%error, "could not flush a job's events");
            }
        }
        let mut outcome = result.unwrap_or_else(|error| did_not_start(job.agent, &error));
        if let (Some(reason), Some(error)) = (job.stop_reason(), outcome.error.as_mut())
            && outcome.status == Status::Cancelled
        {
            error.message = format!("the {} run was {}", outcome.agent, reason.describe());
            error.hint = reason.hint().map(str::to_owned);
        }
        self.tree_finished(&job.id, &mut outcome, in_place).await;
        outcome
    }

    /// The engine's run, every event recorded, the store's progress line kept fresh.
    async fn run_observed(
        &self,
        job: &Job,
        placed: Placed,
        recorder: Option<&Recorder>,
        mut watch: Option<EventWatch>,
    ) -> Result<Outcome, SetupError> {
        let mut observe = |events: &[AgentEvent]| {
            job.progress.observe(events);
            if let Some(recorder) = recorder {
                recorder.events(events);
            }
            if let Some(EventWatch(watch)) = &mut watch {
                watch(events);
            }
        };
        let run = self
            .engine
            .run_placed(placed, job.cancel_token().clone(), &mut observe);
        tokio::pin!(run);
        let mut copy = tokio::time::interval(STORE_POLL);
        loop {
            tokio::select! {
                result = &mut run => return result,
                _ = copy.tick() => if let (Some(recorder), Some(line)) = (recorder, job.progress.line()) {
                    recorder.progress(&line);
                },
            }
        }
    }

    /// Record the end, keep the job for `job_wait`, and tell every waiter.
    async fn finish(&self, job: &Arc<Job>, mut outcome: Outcome, options: JobOptions) {
        let status = match job.stop_reason() {
            Some(StopReason::Shutdown(_)) if outcome.status == Status::Cancelled => {
                JobStatus::Interrupted
            }
            _ => JobStatus::of(outcome.status),
        };
        if let Some(path) = options.save_to {
            let answer = outcome.answer.clone();
            let shown = path.display().to_string();
            // Off the runtime's threads: the answer may be megabytes, the disk slow.
            let saved = tokio::task::spawn_blocking(move || save_answer(&path, &answer))
                .await
                .unwrap_or_else(|error| Err(std::io::Error::other(error)));
            if let Err(error) = saved {
                outcome.warnings.push(format!(
                    "could not append the answer to {shown}: {error}; job_result returns it"
                ));
            }
        }
        let finished = Arc::new(Finished { status, outcome });
        let record = finished.clone();
        let id = job.id.clone();
        self.record(move |store| store.finish(&id, record.status, &record.outcome))
            .await;
        job.set_state(JobState::Finished(finished));
        let recorded = self.store.is_ok();
        self.keep_finished(&job.id, recorded);
        self.tell_waiters(job);
        // A run's burst leaves the allocator's heaps fragmented: once its job ended, what they
        // hold freed goes back to the system.
        cli_agent_engine::platform::release_freed_memory();
    }

    /// A finished job is in the store: it leaves memory, unless the store is unusable (it was
    /// not `recorded`), when the latest few stay for `job_wait`.
    fn keep_finished(&self, id: &JobId, recorded: bool) {
        let mut live = self.lock();
        if recorded {
            live.jobs.remove(id);
            return;
        }
        live.finished.push_back(id.clone());
        while live.finished.len() > FINISHED_KEPT {
            if let Some(oldest) = live.finished.pop_front() {
                live.jobs.remove(&oldest);
            }
        }
    }

    /// A write to the store, off the runtime's threads (another process may hold the lock),
    /// that must not stop the run when it fails.
    pub(super) async fn record(
        &self,
        write: impl FnOnce(&Store) -> Result<(), StoreError> + Send + 'static,
    ) {
        let Ok(store) = self.store.clone() else {
            return;
        };
        match tokio::task::spawn_blocking(move || write(&store)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "could not record a job"),
            Err(error) => tracing::warn!(%error, "recording a job failed"),
        }
    }

    /// Jobs of this server that a shell or another server asked to cancel.
    pub async fn poll_cancel_requests(self: Arc<Self>) {
        let Ok(store) = self.store.clone() else {
            return;
        };
        let mut tick = tokio::time::interval(STORE_POLL);
        loop {
            tokio::select! {
                () = self.shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            let (store, owner) = (store.clone(), self.owner);
            let requested =
                tokio::task::spawn_blocking(move || store.cancel_requests(&owner)).await;
            for id in requested.ok().and_then(Result::ok).unwrap_or_default() {
                if let Some(job) = self.live(&id) {
                    tracing::info!(job = %id, "cancel requested from outside: cancelling");
                    job.stop(StopReason::JobCancel);
                }
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Live> {
        self.live
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What comes before a job's run: a question for the person, its place in the queue (taken as
/// the job was started, unless it asks first).
struct First {
    ask: Option<AskFirst>,
    ticket: Option<Ticket>,
}

/// The outcome of a job stopped while it waited in the queue.
fn not_run(job: &Job) -> Outcome {
    let stop = job.stop_reason();
    let error = ErrorInfo {
        kind: ErrorKind::Cancelled,
        message: format!(
            "the {} job was {} while it waited in the queue",
            job.agent,
            stop.map_or("cancelled", StopReason::describe)
        ),
        hint: stop.and_then(StopReason::hint).map(str::to_owned),
    };
    let mut outcome = Outcome::not_run(job.agent.name(), Status::Cancelled, error);
    outcome.duration_ms = u64::try_from(job.elapsed().as_millis()).unwrap_or(u64::MAX);
    outcome
}

/// The outcome of a job whose run panicked: a bug, reported without taking the server down.
fn panicked(job: &Job, error: JoinError) -> Outcome {
    let panic = match error.try_into_panic() {
        Ok(panic) => panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned()),
        Err(error) => error.to_string(),
    };
    tracing::error!(agent = %job.agent, job = %job.id, %panic, "a run panicked");
    let error = ErrorInfo {
        kind: ErrorKind::Crashed,
        message: format!(
            "internal error in cli-agent-mcp while running {}: {panic}. Only this job failed and \
             its processes were stopped; the server carries on. Please report this bug",
            job.agent
        ),
        hint: None,
    };
    Outcome::not_run(job.agent.name(), Status::Failed, error)
}

/// Debug builds only: a prompt containing the value of `CAM_DEBUG_PANIC` panics inside its
/// run, so the end-to-end tests can prove that a panic stays inside its job.
#[cfg(debug_assertions)]
fn debug_panic(prompt: &str) {
    if let Ok(marker) = std::env::var("CAM_DEBUG_PANIC")
        && !marker.is_empty()
        && prompt.contains(&marker)
    {
        panic!("CAM_DEBUG_PANIC asked for a panic");
    }
}

#[cfg(not(debug_assertions))]
fn debug_panic(_prompt: &str) {}

/// The outcome of a job whose CLI could not be started.
fn did_not_start(agent: Agent, error: &SetupError) -> Outcome {
    let error = ErrorInfo {
        kind: ErrorKind::Crashed,
        message: format!("{agent} did not start: {error}"),
        hint: None,
    };
    Outcome::not_run(agent.name(), Status::Failed, error)
}

/// Append the whole answer to `path`, checked inside the workspace when the call was read. A
/// symlink put there since is not followed.
fn save_answer(path: &std::path::Path, answer: &str) -> std::io::Result<()> {
    use std::io::Write;
    if answer.is_empty() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    open_not_following(&mut options, path)?.write_all(answer.as_bytes())
}

/// `path` opened with `options`, refused if it is a symlink.
#[cfg(unix)]
fn open_not_following(
    options: &mut std::fs::OpenOptions,
    path: &std::path::Path,
) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    options
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
}

/// `path` opened with `options`, refused if it is a symlink or another reparse point: the
/// link itself is opened (not what it points to) and checked before anything is written.
#[cfg(windows)]
fn open_not_following(
    options: &mut std::fs::OpenOptions,
    path: &std::path::Path,
) -> std::io::Result<std::fs::File> {
    use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_OPEN_REPARSE_POINT,
    };
    let file = options
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    if file.metadata()?.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is a link: not followed", path.display()),
        ));
    }
    Ok(file)
}
