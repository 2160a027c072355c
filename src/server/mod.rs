//! `cli-agent-mcp serve`: MCP over stdio (or Streamable HTTP, see [`crate::http`]), one tool per CLI.
//!
//! The layer is thin: `tools` turns arguments into a run request, the engine runs it,
//! `result` turns the outcome into a tool result, `progress` reports events on the way.
//! `transport` carries the MCP channel: `inbound` reads each line, answering every malformed
//! one, and `stdin` notices the client leaving. The rest is the lifecycle: `calls` and
//! `signals` decide which runs stop and why, and [`serve`] bounds the shutdown.
//!
//! Shutdown (stdin EOF, SIGTERM, SIGHUP, SIGINT when idle): every run is cancelled at once and
//! torn down in its own task; the server waits for all of them up to the engine's grace plus
//! 1.2 s, SIGKILLs whatever is left, gives the answers until the grace plus 1.8 s to reach a
//! client still reading, and exits 0. rmcp's own wait of up to 5 s after EOF is never waited out.

mod calls;
#[cfg(test)]
mod fuzz;
mod handler;
mod inbound;
mod job_tools;
mod policy;
mod progress;
mod result;
mod signals;
mod stdin;
mod tasks;
pub(crate) mod tools;
mod transport;

use std::sync::Arc;
use std::time::Duration;

use cli_agent_engine::process::{become_subreaper, kill_every_run};
use cli_agent_engine::{Engine, EngineConfig};
use rmcp::service::{QuitReason, ServerInitializeError};
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout_at};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use self::handler::AgentServer;
pub use self::signals::SigintMode;
pub use self::tools::Offer;

use self::calls::{Shutdown, ShutdownCause};
use self::policy::Policy;
use self::stdin::EofWatch;
use self::tools::Catalogue;
use self::transport::Channel;
use crate::args::ServeArgs;
use crate::http;
use crate::jobs::store::{Store, StoreSettings};
use crate::jobs::{Caps, Jobs, Scheduler};

pub const EXIT_OK: u8 = 0;
pub const EXIT_SESSION_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

/// The whole shutdown takes at most the engine's grace plus this: the promise is "plus 2 s".
const SHUTDOWN_MARGIN: Duration = Duration::from_millis(1800);
/// The end of the margin, kept for the answers of the stopped calls to reach the client.
const FLUSH_RESERVE: Duration = Duration::from_millis(600);

#[derive(Debug, thiserror::Error)]
enum SessionError {
    #[error("the MCP session could not start: {0}")]
    Start(Box<ServerInitializeError>),
    #[error("the MCP session failed: {0}")]
    Failed(#[from] tokio::task::JoinError),
}

pub async fn serve(
    args: ServeArgs,
    config: EngineConfig,
    offers: Vec<Offer>,
    store: StoreSettings,
) -> u8 {
    let http = match args
        .http
        .addr
        .map(|addr| http::Settings::new(addr, &args.http))
    {
        None => None,
        Some(Ok(settings)) => Some(settings),
        Some(Err(error)) => {
            eprintln!("error: {error}");
            return EXIT_USAGE;
        }
    };
    let (server, lifecycle) = match build(&args, config, &offers, store).await {
        Ok(built) => built,
        Err(code) => return code,
    };
    match http {
        Some(settings) => http::serve(server, settings, lifecycle).await,
        None => serve_stdio(server, lifecycle).await,
    }
}

/// What both transports share to stop: the server-wide shutdown and the runs to wait for.
pub struct Lifecycle {
    pub shutdown: Shutdown,
    runs: TaskTracker,
    grace: Duration,
}

impl Lifecycle {
    /// When the whole shutdown must be over, counted from now.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.grace + SHUTDOWN_MARGIN
    }

    /// Wait for every run's teardown until the answers' reserve before `deadline`; then kill
    /// what is left.
    pub async fn stop_runs(&self, deadline: Instant) {
        stop_runs(&self.runs, deadline - FLUSH_RESERVE).await;
    }
}

/// The handler and its lifecycle, from the settings; an error is the exit code.
async fn build(
    args: &ServeArgs,
    config: EngineConfig,
    offers: &[Offer],
    store: StoreSettings,
) -> Result<(AgentServer, Lifecycle), u8> {
    let catalogue = Catalogue::new(offers, &args.enable, &args.disable).map_err(usage)?;
    let policy = Policy::new(&args.allow_root, args.max_permission).map_err(usage)?;
    let caps = caps(args.max_runs, offers).map_err(usage)?;
    if let Err(error) = become_subreaper() {
        tracing::warn!(%error, "cannot become a subreaper: tool processes that escape a CLI's session may outlive it");
    }
    let grace = config.grace;
    let runs = TaskTracker::new();
    let stopping = CancellationToken::new();
    let jobs = Jobs::new(
        Arc::new(Engine::new(config)),
        open_store(store).await,
        Scheduler::new(caps),
        runs.clone(),
        stopping.clone(),
    );
    let shutdown = Shutdown::new(stopping, jobs.clone());
    if let Err(error) = signals::watch(args.sigint, jobs.clone(), shutdown.clone()) {
        eprintln!("error: cannot install signal handlers: {error}");
        return Err(EXIT_USAGE);
    }
    tokio::spawn(jobs.clone().poll_cancel_requests());
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        tools = %catalogue.names(),
        roots = %policy.describe_roots(),
        max_permission = %policy.max_permission(),
        "serving MCP {}",
        if args.http.addr.is_some() {
            "over Streamable HTTP"
        } else {
            "on stdio"
        }
    );
    let server = AgentServer {
        jobs,
        catalogue,
        shutdown: shutdown.clone(),
        heartbeat: (args.progress_heartbeat_secs > 0)
            .then(|| Duration::from_secs(args.progress_heartbeat_secs)),
        policy,
        handoff_after: Duration::from_secs(args.handoff_secs),
        result_budget: usize::try_from(args.max_result_chars).unwrap_or(usize::MAX),
    };
    let lifecycle = Lifecycle {
        shutdown,
        runs,
        grace,
    };
    Ok((server, lifecycle))
}

fn usage(error: impl std::fmt::Display) -> u8 {
    eprintln!("error: {error}");
    EXIT_USAGE
}

/// Serve one MCP session on stdin/stdout, then shut down.
async fn serve_stdio(server: AgentServer, lifecycle: Lifecycle) -> u8 {
    let shutdown = lifecycle.shutdown.clone();
    let session = CancellationToken::new();
    let mut serving = tokio::spawn(run_session(server, shutdown.clone(), session.clone()));

    let ended = tokio::select! {
        biased;
        () = shutdown.triggered() => None,
        ended = &mut serving => {
            shutdown.trigger(ShutdownCause::SessionEnded);
            Some(ended)
        }
    };
    let deadline = lifecycle.deadline();
    lifecycle.stop_runs(deadline).await;
    match ended {
        None => {
            flush(serving, session, deadline).await;
            EXIT_OK
        }
        Some(ended) => session_exit_code(ended),
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{var}={value:?} is not a number of runs: set it to 1 or more, or unset it")]
struct BadCap {
    var: String,
    value: String,
}

/// The names of the job tools, which no agent may take.
pub fn job_tool_names() -> Vec<&'static str> {
    job_tools::JobTool::ALL.map(|tool| tool.name()).to_vec()
}

/// `CAM_MAX_RUNS` overall, and for each agent `CAM_<AGENT>_MAX_RUNS`, else its configured cap.
fn caps(total: u64, offers: &[Offer]) -> Result<Caps, BadCap> {
    let mut per_agent = std::collections::HashMap::new();
    for offer in offers {
        let agent = offer.agent;
        let var = agent.env_var("MAX_RUNS");
        let Ok(value) = std::env::var(&var) else {
            if let Some(cap) = offer.max_runs {
                per_agent.insert(agent, cap);
            }
            continue;
        };
        match value.trim().parse::<usize>() {
            Ok(cap) if cap > 0 => {
                per_agent.insert(agent, cap);
            }
            _ => return Err(BadCap { var, value }),
        }
    }
    Ok(Caps {
        total: usize::try_from(total).unwrap_or(usize::MAX),
        per_agent,
    })
}

/// The job store, made ready: a killed server's jobs marked interrupted, old ones pruned. A
/// store that can't be used leaves jobs unrecorded, with one warning; calls still run.
async fn open_store(settings: StoreSettings) -> Result<Store, String> {
    let opened = tokio::task::spawn_blocking(move || {
        let store = Store::open_configured(&settings)?;
        let interrupted = store.interrupt_orphans()?;
        if !interrupted.is_empty() {
            tracing::info!(
                jobs = interrupted.len(),
                "marked the jobs of servers that are gone as interrupted"
            );
        }
        let pruned = store.prune(settings.retention()?)?;
        Ok::<_, crate::jobs::store::StoreError>((store, pruned))
    })
    .await;
    match opened {
        Ok(Ok((store, pruned))) => {
            tracing::debug!(path = %store.path().display(), pruned, "job store ready");
            Ok(store)
        }
        Ok(Err(error)) => {
            tracing::warn!(%error, "the job store is unusable: calls still run, but jobs are not recorded and the job tools answer with this error");
            Err(error.to_string())
        }
        Err(error) => Err(error.to_string()),
    }
}

/// Serve one MCP session on stdin/stdout until it ends.
async fn run_session(
    server: AgentServer,
    shutdown: Shutdown,
    session: CancellationToken,
) -> Result<QuitReason, SessionError> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let channel = Channel::new(EofWatch::new(stdin, shutdown), stdout);
    let running = transport::serve(Arc::new(server), channel, session)
        .await
        .map_err(|error| SessionError::Start(Box::new(error)))?;
    Ok(running.waiting().await?)
}

/// Wait for every run's teardown until `deadline`; then kill what is left.
async fn stop_runs(runs: &TaskTracker, deadline: Instant) {
    runs.close();
    if timeout_at(deadline, runs.wait()).await.is_err() {
        let killed = kill_every_run();
        tracing::warn!(
            runs = runs.len(),
            killed,
            "runs were still stopping after the grace period: killed their processes"
        );
    }
}

/// Let the answers of the stopped calls out, then end the session, by `deadline`.
async fn flush(
    serving: JoinHandle<Result<QuitReason, SessionError>>,
    session: CancellationToken,
    deadline: Instant,
) {
    session.cancel();
    if timeout_at(deadline, serving).await.is_err() {
        tracing::debug!("the MCP session was still closing at exit");
    }
}

fn session_exit_code(
    ended: Result<Result<QuitReason, SessionError>, tokio::task::JoinError>,
) -> u8 {
    match ended
        .map_err(SessionError::from)
        .and_then(|session| session)
    {
        Ok(reason) => {
            tracing::info!(?reason, "the MCP session ended");
            EXIT_OK
        }
        Err(error) => {
            tracing::error!(%error);
            EXIT_SESSION_FAILED
        }
    }
}
