//! `cli-agent-mcp run`: one agent, once, headless. The answer goes to stdout, a line per
//! meaningful event to stderr (a live status line on a terminal).

use std::io::{IsTerminal, Read, Write};

use cli_agent_engine::Isolation;
use cli_agent_engine::git::JobKey;
use cli_agent_engine::process::adopt_orphans;
use cli_agent_engine::redact::redact;
use cli_agent_engine::{
    Agent, AgentEvent, Engine, EngineConfig, ErrorInfo, ErrorKind, Outcome, OutputSchema, Placed,
    Prepared, RunRequest, Status,
};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::cli::RunArgs;
use crate::jobs::finished_record;
use crate::jobs::store::{
    JobId, JobStatus, NewJob, Origin, Recorder, Store, StoreSettings, TreeRecord, TreeState,
};
use crate::mcp::ChangesReport;
use crate::mcp::result::check_text;

/// Exit codes of `run`.
const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_TIMED_OUT: u8 = 124;
const EXIT_SIGINT: u8 = 130;
const EXIT_SIGTERM: u8 = 143;

pub async fn run(
    args: RunArgs,
    config: EngineConfig,
    agents: &[Agent],
    store: &StoreSettings,
) -> u8 {
    match run_once(&args, config, agents, store).await {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            EXIT_USAGE
        }
    }
}

/// Run the agent and report; the exit code the run earned, or what made it unusable.
async fn run_once(
    args: &RunArgs,
    config: EngineConfig,
    agents: &[Agent],
    store: &StoreSettings,
) -> Result<u8, String> {
    let (agent, request) = request(args, agents)?;
    if let Err(error) = adopt_orphans() {
        tracing::warn!(%error, "cannot make this process the reaper of its runs' orphans: tool processes that escape a CLI's session may outlive it");
    }
    let cancel = CancellationToken::new();
    let interrupted = watch_signals(cancel.clone())
        .map_err(|error| format!("cannot install signal handlers: {error}"))?;
    let engine = Engine::new(config);
    let prepared = engine
        .prepare(agent, request)
        .map_err(|error| error.to_string())?;
    let job = Recording::start(&prepared, store);
    let placed = job.place(&engine, prepared).await?;
    let outcome = run_shown(&engine, agent, placed, cancel, &job).await?;
    job.finish(&outcome);
    print_outcome(&outcome, args.json, job.id());
    if let (false, Some(id)) = (args.json, job.id()) {
        eprintln!("job: {id} (cli-agent-mcp jobs show {id})");
    }
    // The engine returns only once the whole tree is gone, so a signal exit comes last.
    let signalled = *interrupted.borrow();
    Ok(signalled.unwrap_or_else(|| exit_code(outcome.status)))
}

/// The run, its events shown on the status line and recorded in the job as they come.
async fn run_shown(
    engine: &Engine,
    agent: Agent,
    placed: Placed,
    cancel: CancellationToken,
    job: &Recording,
) -> Result<Outcome, String> {
    let mut status = StatusLine::new(agent);
    let result = engine
        .run_placed(placed, cancel, &mut |events| {
            events.iter().for_each(|event| status.show(event));
            job.events(events);
        })
        .await;
    status.finish();
    result.map_err(|error| error.to_string())
}

fn exit_code(status: Status) -> u8 {
    match status {
        Status::Completed => 0,
        Status::TimedOut => EXIT_TIMED_OUT,
        Status::Failed | Status::Cancelled => EXIT_FAILED,
    }
}

fn request(args: &RunArgs, agents: &[Agent]) -> Result<(Agent, RunRequest), String> {
    let agent = cli_agent_engine::agent::find(agents, &args.agent).map_err(|e| e.to_string())?;
    let prompt = if args.prompt == "-" {
        let mut prompt = String::new();
        std::io::stdin()
            .read_to_string(&mut prompt)
            .map_err(|error| format!("cannot read the prompt from stdin: {error}"))?;
        prompt
    } else {
        args.prompt.clone()
    };
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|error| {
            format!("cannot read the current directory: {error}; pass --workspace")
        })?,
    };
    let mut request = RunRequest::new(prompt, workspace);
    request.permission = args.permission;
    request.model = args.model.clone();
    request.session_id = args.session_id.clone();
    request.timeout = args.timeout_secs.map(std::time::Duration::from_secs);
    request.append_system_prompt = args.append_system_prompt.clone();
    request.isolation = args
        .isolation
        .or(agent.profile().isolation)
        .unwrap_or_default();
    request.base = args.base;
    request.check = args.check.clone();
    request.output_schema = args.output_schema.as_deref().map(read_schema).transpose()?;
    Ok((agent, request))
}

/// The `--output-schema` file's schema, checked.
fn read_schema(path: &std::path::Path) -> Result<OutputSchema, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read the output schema {shown}: {error}"))?;
    let schema = serde_json::from_str(&text).map_err(|error| {
        format!("the output schema {shown} is not JSON ({error}): write a JSON Schema object")
    })?;
    OutputSchema::new(schema).map_err(|error| format!("{shown}: {error}"))
}

/// SIGINT and SIGTERM cancel the run; the exit code they ask for is kept for the end.
fn watch_signals(
    cancel: CancellationToken,
) -> std::io::Result<tokio::sync::watch::Receiver<Option<u8>>> {
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sigterm = signal(SignalKind::terminate())?;
    let (tx, rx) = tokio::sync::watch::channel(None);
    tokio::spawn(async move {
        let code = tokio::select! {
            _ = sigint.recv() => EXIT_SIGINT,
            _ = sigterm.recv() => EXIT_SIGTERM,
        };
        tx.send_replace(Some(code));
        cancel.cancel();
    });
    Ok(rx)
}

fn print_outcome(outcome: &Outcome, json: bool, id: Option<&JobId>) {
    let mut stdout = std::io::stdout().lock();
    let written = if json {
        serde_json::to_writer(&mut stdout, outcome)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(stdout))
    } else if outcome.answer.is_empty() {
        Ok(())
    } else {
        writeln!(stdout, "{}", outcome.answer.trim_end())
    };
    if let Err(error) = written.and_then(|()| stdout.flush()) {
        eprintln!("error: cannot write the answer to stdout: {error}");
    }
    for warning in &outcome.warnings {
        eprintln!("warning: {warning}");
    }
    if let Some(error) = &outcome.error {
        eprintln!(
            "{}: {}: {}",
            outcome.agent,
            outcome.status.name(),
            error.message
        );
        if let Some(hint) = &error.hint {
            eprintln!("hint: {hint}");
        }
    }
    if let (false, Some(session_id)) = (json, &outcome.session_id) {
        eprintln!("session: {session_id}");
    }
    if let (false, Some(tree), Some(id)) = (json, &outcome.tree, id) {
        eprintln!("{}", ChangesReport::of(id, tree).text());
    }
    if let (false, Some(check)) = (json, &outcome.check) {
        eprintln!("{}", check_text(check));
    }
}

/// The run's record in the job store; without a usable store, nothing (and one warning).
struct Recording {
    store: Option<(Store, JobId, Recorder)>,
}

impl Recording {
    fn start(prepared: &Prepared, settings: &StoreSettings) -> Self {
        let request = prepared.request();
        let id = JobId::random();
        let new = NewJob {
            id: &id,
            agent: prepared.agent(),
            origin: Origin::Command,
            workspace: &request.workspace,
            permission: request.permission,
            model: request.model.as_deref(),
            session_id: request.session_id.as_deref(),
            prompt: &request.prompt,
            status: JobStatus::Running,
            allowed_past: None,
        };
        let opened =
            Store::open_configured(settings).and_then(|store| store.insert(&new).map(|()| store));
        match opened {
            Ok(store) => {
                let recorder = store.recorder(&id);
                Self {
                    store: Some((store, id, recorder)),
                }
            }
            Err(error) => {
                tracing::warn!(%error, "the run is not recorded as a job");
                Self { store: None }
            }
        }
    }

    /// Places the run in its tree (see [`Engine::place`]) and records it. A run that cannot be
    /// placed is recorded as failed, and the error says why.
    async fn place(&self, engine: &Engine, prepared: Prepared) -> Result<Placed, String> {
        let agent = prepared.agent();
        let placed = self.try_place(engine, prepared).await;
        if let (Err(error), Some((store, id, _))) = (&placed, &self.store) {
            let info = ErrorInfo {
                kind: ErrorKind::Crashed,
                message: error.clone(),
                hint: None,
            };
            let outcome = Outcome::not_run(agent.name(), Status::Failed, info);
            if let Err(error) = store.finish(id, JobStatus::Failed, &outcome) {
                tracing::warn!(%error, "could not record the run's end");
            }
        }
        placed
    }

    async fn try_place(&self, engine: &Engine, prepared: Prepared) -> Result<Placed, String> {
        let (id, worktrees) = match &self.store {
            Some((store, id, _)) => (id.clone(), store.worktrees_dir()),
            None if prepared.request().isolation == Isolation::Worktree => {
                return Err(
                    "isolation `worktree` needs the job store, which is unusable (see \
                     the warning above): fix it, or run with --isolation none"
                        .to_owned(),
                );
            }
            None => (JobId::random(), std::env::temp_dir()),
        };
        let key = JobKey::new(id.as_str()).map_err(|error| error.to_string())?;
        let placed = engine
            .place(prepared, key, worktrees)
            .await
            .map_err(|error| error.to_string())?;
        if let (Some((store, id, _)), Some(tree)) = (&self.store, placed.tree()) {
            let record = TreeRecord {
                tree: tree.clone(),
                after: None,
                state: TreeState::Running,
            };
            if let Err(error) = store.set_tree(id, &record) {
                tracing::warn!(%error, "could not record the run's tree");
            }
        }
        Ok(placed)
    }

    fn id(&self) -> Option<&JobId> {
        self.store.as_ref().map(|(_, id, _)| id)
    }

    fn events(&self, events: &[AgentEvent]) {
        if let Some((_, _, recorder)) = &self.store {
            recorder.events(events);
        }
    }

    fn finish(&self, outcome: &Outcome) {
        let Some((store, id, recorder)) = &self.store else {
            return;
        };
        recorder.flush();
        if let Err(error) = store.finish(id, JobStatus::of(outcome.status), outcome) {
            tracing::warn!(%error, "could not record the run's end");
        }
        let record = outcome.tree.as_ref().and_then(finished_record);
        if let Some(Err(error)) = record.map(|record| store.set_tree(id, &record)) {
            tracing::warn!(%error, "could not record the run's tree");
        }
    }
}

/// Event lines on stderr: one per event, or one live line rewritten in place on a terminal.
struct StatusLine {
    agent: Agent,
    live: bool,
    shown: bool,
}

impl StatusLine {
    fn new(agent: Agent) -> Self {
        Self {
            agent,
            live: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn show(&mut self, event: &AgentEvent) {
        let Some(line) = event.describe() else { return };
        let line = redact(&line);
        let mut stderr = std::io::stderr().lock();
        let _ = if self.live {
            self.shown = true;
            write!(stderr, "\r\x1b[2K{}: {line}", self.agent)
        } else {
            writeln!(stderr, "{}: {line}", self.agent)
        };
    }

    fn finish(&mut self) {
        if self.shown {
            eprintln!();
        }
    }
}
