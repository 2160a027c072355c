//! `cli-agent-mcp run`: one agent, once, headless, submitted as a job as every run is
//! ([`Jobs::submit`]). The answer goes to stdout, a line per meaningful event to stderr (a
//! live status line on a terminal).

use std::io::{IsTerminal, Read, Write};
use std::sync::Arc;

use cli_agent_engine::process::adopt_orphans;
use cli_agent_engine::redact::redact;
use cli_agent_engine::{
    Agent, AgentEvent, Engine, EngineConfig, Outcome, OutputSchema, RunRequest, Status,
};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::args::RunArgs;
use crate::changes_report::ChangesReport;
use crate::jobs::store::{JobId, Origin, Store, StoreSettings};
use crate::jobs::{Caps, EventWatch, JobOptions, Jobs, Scheduler, StopReason, Submission};
use crate::mcp::result::check_text;
use crate::stop_signals::{StopSignal, StopSignals};

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
    let jobs = jobs_of_one_run(config, store).await;
    let interrupted = watch_signals(jobs.clone())
        .map_err(|error| format!("cannot install signal handlers: {error}"))?;
    tokio::spawn(jobs.clone().poll_cancel_requests());
    let mut status = StatusLine::new(agent);
    let watch = move |events: &[AgentEvent]| events.iter().for_each(|event| status.show(event));
    let submission = Submission {
        agent,
        run: request,
        origin: Origin::Command,
        options: JobOptions {
            watch: Some(EventWatch::new(watch)),
            ..JobOptions::default()
        },
    };
    let job = jobs
        .submit(JobId::random(), submission)
        .await
        .map_err(|refused| refused.to_string())?;
    let finished = job.finished().await;
    let recorded = jobs.store().is_ok().then_some(&job.id);
    print_outcome(&finished.outcome, args.json, recorded);
    if let (false, Some(id)) = (args.json, recorded) {
        eprintln!("job: {id} (cli-agent-mcp jobs show {id})");
    }
    // A job ends only once its whole tree is gone, so a signal exit comes last.
    let signalled = *interrupted.borrow();
    Ok(signalled.unwrap_or_else(|| exit_code(finished.outcome.status)))
}

/// The jobs of `run`: one run, recorded in the job store where `settings` say (a store that
/// can't be used leaves the run unrecorded, with one warning).
async fn jobs_of_one_run(config: EngineConfig, settings: &StoreSettings) -> Arc<Jobs> {
    let settings = settings.clone();
    let store = tokio::task::spawn_blocking(move || Store::open_configured(&settings))
        .await
        .map_err(|error| error.to_string())
        .and_then(|opened| opened.map_err(|error| error.to_string()))
        .inspect_err(|error| tracing::warn!(%error, "the run is not recorded as a job"));
    let one = Caps {
        total: 1,
        per_agent: Default::default(),
        worktrees: usize::MAX,
    };
    let engine = Arc::new(Engine::new(config));
    Jobs::new(
        engine,
        store,
        Scheduler::new(one),
        TaskTracker::new(),
        CancellationToken::new(),
    )
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
    request.fork = args.fork;
    request.effort = args.effort;
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

/// SIGINT and SIGTERM (Ctrl-C and Ctrl-Break on Windows) cancel the run; the exit code they
/// ask for is kept for the end.
fn watch_signals(jobs: Arc<Jobs>) -> std::io::Result<tokio::sync::watch::Receiver<Option<u8>>> {
    let mut signals = StopSignals::install(false)?;
    let (tx, rx) = tokio::sync::watch::channel(None);
    tokio::spawn(async move {
        let (code, by) = match signals.recv().await {
            Some(StopSignal::Interrupt) => (EXIT_SIGINT, cancelled_by(StopSignal::Interrupt)),
            Some(signal) => (EXIT_SIGTERM, cancelled_by(signal)),
            None => return,
        };
        tx.send_replace(Some(code));
        jobs.stop_all(StopReason::Signalled(by));
    });
    Ok(rx)
}

/// How a run's result names the signal that cancelled it.
fn cancelled_by(signal: StopSignal) -> &'static str {
    match (signal, cfg!(windows)) {
        (StopSignal::Interrupt, false) => "cancelled by SIGINT",
        (_, false) => "cancelled by SIGTERM",
        (StopSignal::Interrupt, true) => "cancelled by Ctrl-C",
        (_, true) => "cancelled by Ctrl-Break",
    }
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
}

/// The live line ends with the run, whose events it showed.
impl Drop for StatusLine {
    fn drop(&mut self) {
        if self.shown {
            eprintln!();
        }
    }
}
