//! `cli-agent-mcp serve` (and the bare binary): owns the server's lifecycle and starts the
//! transport it was asked for below it.
//!
//! It turns the command line's values into plain settings, starts opening the job store,
//! builds the engine, the jobs and the MCP handler ([`crate::mcp`]), installs the signal
//! handlers, watches the launcher's pipe when a launcher gave one, then hands the handler and
//! its [`Lifecycle`] to stdio or to Streamable HTTP ([`crate::transport`]), with the
//! dashboard's routes beside `/mcp` on HTTP. The transport serves until the shutdown and
//! returns the exit code.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use cli_agent_engine::process::adopt_orphans;
use cli_agent_engine::{Engine, EngineConfig};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::args::{self, AskBeyondBounds, HttpArgs, ServeArgs};
use crate::dashboard::{self, DashboardState};
use crate::jobs::JobsError;
use crate::jobs::store::{Store, StoreSettings};
use crate::jobs::{Caps, Jobs, Scheduler, tidy_worktrees};
use crate::mcp::policy::Policy;
use crate::mcp::{
    AgentServer, BeyondBounds, Catalogue, EXIT_USAGE, Lifecycle, RequestStates, Shutdown,
    SigintMode, watch_signals,
};
use crate::offer::Offer;
use crate::transport::parent_pipe::{self, ParentPipe};
use crate::transport::{http, stdio};

#[derive(Debug, thiserror::Error)]
#[error("{var}={value:?} is not a number of runs: set it to 1 or more, or unset it")]
struct BadCap {
    var: String,
    value: String,
}

/// What `main` hands the server besides its arguments and the engine's settings.
pub struct Start {
    pub offers: Vec<Offer>,
    pub store: StoreSettings,
    pub parent: Option<ParentPipe>,
}

pub async fn run(args: ServeArgs, config: EngineConfig, start: Start) -> u8 {
    let Start {
        offers,
        store,
        parent,
    } = start;
    let http = match args
        .http
        .addr
        .map(|addr| http::Settings::new(addr, &http_options(&args.http)))
    {
        None => None,
        Some(Ok(settings)) => Some(settings),
        Some(Err(error)) => return usage(error),
    };
    // SQLite's opening, off the runtime's threads.
    let store = tokio::task::spawn_blocking(move || open_store(&store))
        .await
        .unwrap_or_else(|error| Err(format!("opening the job store failed: {error}")));
    let built = build(&args, config, &offers, store).await;
    let (server, lifecycle) = match built {
        Ok(built) => built,
        Err(code) => return code,
    };
    if let Some(pipe) = parent {
        parent_pipe::watch(pipe, lifecycle.shutdown.clone());
    }
    match http {
        Some(settings) => {
            // The dashboard's routes are made with the store, as the address is bound.
            let store = server.jobs.store();
            let routes = dashboard_routes(store, args.http.allowed_hosts.clone());
            http::serve(server, settings, lifecycle, routes).await
        }
        None => stdio::serve(server, lifecycle).await,
    }
}

/// The command line's `--sigint`, as the signal handlers take it.
fn sigint_mode(mode: args::SigintMode) -> SigintMode {
    match mode {
        args::SigintMode::Cancel => SigintMode::Cancel,
        args::SigintMode::Exit => SigintMode::Exit,
        args::SigintMode::CancelThenExit => SigintMode::CancelThenExit,
    }
}

fn http_options(args: &HttpArgs) -> http::Options {
    http::Options {
        token_file: args.token_file.clone(),
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        max_body_bytes: args.max_body_bytes,
        max_requests: args.max_requests,
        max_streams: args.max_streams,
        #[cfg(feature = "conformance-fixtures")]
        fixtures: args.conformance_fixtures,
    }
}

/// The handler and its lifecycle, from the settings; an error is the exit code.
async fn build(
    args: &ServeArgs,
    config: EngineConfig,
    offers: &[Offer],
    store: Result<Store, String>,
) -> Result<(AgentServer, Lifecycle), u8> {
    let catalogue = Catalogue::new(offers, &args.enable, &args.disable).map_err(usage)?;
    catalogue.offer_installed(&config);
    let policy = Policy::new(&args.allow_root, args.max_permission).map_err(usage)?;
    let caps = caps(args, offers).map_err(usage)?;
    if let Err(error) = adopt_orphans() {
        tracing::warn!(%error, "cannot make this process the reaper of its runs' orphans: tool processes that escape a CLI's session may outlive it");
    }
    let grace = config.grace;
    let runs = TaskTracker::new();
    let stopping = CancellationToken::new();
    let jobs = Jobs::new(
        Arc::new(Engine::new(config)),
        store,
        Scheduler::new(caps),
        runs.clone(),
        stopping.clone(),
    );
    let shutdown = Shutdown::new(stopping, jobs.clone());
    if let Err(error) = watch_signals(sigint_mode(args.sigint), jobs.clone(), shutdown.clone()) {
        eprintln!("error: cannot install signal handlers: {error}");
        return Err(EXIT_USAGE);
    }
    tokio::spawn(jobs.clone().poll_cancel_requests());
    log_start(args, &catalogue, &policy);
    let ask_timeout = Duration::from_secs(args.ask_timeout_secs);
    let server = AgentServer {
        jobs,
        catalogue,
        heartbeat: (args.progress_heartbeat_secs > 0)
            .then(|| Duration::from_secs(args.progress_heartbeat_secs)),
        policy,
        beyond_bounds: beyond_bounds(args),
        park_questions: args.park_questions,
        handoff_after: Duration::from_secs(args.handoff_secs),
        result_budget: usize::try_from(args.max_result_chars).unwrap_or(usize::MAX),
        subscriptions: Arc::default(),
        board: Arc::default(),
        states: Arc::new(RequestStates::new(ask_timeout).map_err(usage)?),
    };
    Ok((server, Lifecycle::new(shutdown, runs, grace)))
}

fn beyond_bounds(args: &ServeArgs) -> BeyondBounds {
    match args.ask_beyond_bounds {
        AskBeyondBounds::Ask => BeyondBounds::Ask {
            timeout: Duration::from_secs(args.ask_timeout_secs),
        },
        AskBeyondBounds::Refuse => BeyondBounds::Refuse,
    }
}

/// The start's log line.
fn log_start(args: &ServeArgs, catalogue: &Catalogue, policy: &Policy) {
    let over = if args.http.addr.is_some() {
        "over Streamable HTTP"
    } else {
        "on stdio"
    };
    let missing: Vec<_> = catalogue
        .missing()
        .iter()
        .map(|agent| agent.name())
        .collect();
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        tools = %catalogue.names(),
        not_installed = %missing.join(", "),
        roots = %policy.describe_roots(),
        max_permission = %policy.max_permission(),
        "serving MCP {over}"
    );
}

fn usage(error: impl std::fmt::Display) -> u8 {
    eprintln!("error: {error}");
    EXIT_USAGE
}

/// `CAM_MAX_RUNS` overall, and for each agent `CAM_<AGENT>_MAX_RUNS`, else its configured cap;
/// `CAM_MAX_WORKTREES`.
fn caps(args: &ServeArgs, offers: &[Offer]) -> Result<Caps, BadCap> {
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
        total: usize::try_from(args.max_runs).unwrap_or(usize::MAX),
        per_agent,
        worktrees: usize::try_from(args.max_worktrees).unwrap_or(usize::MAX),
    })
}

/// The job store, made ready: a killed server's jobs marked interrupted, old ones pruned. A
/// store that can't be used leaves jobs unrecorded, with one warning; calls still run.
fn open_store(settings: &StoreSettings) -> Result<Store, String> {
    let opened = Store::open_configured(settings).and_then(|store| {
        let retention = settings.retention()?;
        Ok((store, retention))
    });
    match opened {
        Ok((store, retention)) => {
            let kept = store.clone();
            // Housekeeping, on a thread of the blocking pool: no request waits for it.
            tokio::task::spawn_blocking(move || keep_house(&kept, retention));
            Ok(store)
        }
        Err(error) => {
            tracing::warn!(%error, "the job store is unusable: calls still run, but jobs are not recorded and the job tools answer with this error");
            Err(error.to_string())
        }
    }
}

/// The store's housekeeping as a server starts: the jobs of servers that are gone marked
/// interrupted, jobs older than `retention` pruned, worktrees deleted by hand recorded.
fn keep_house(store: &Store, retention: Duration) {
    match store.interrupt_orphans() {
        Ok(interrupted) if !interrupted.is_empty() => tracing::info!(
            jobs = interrupted.len(),
            "marked the jobs of servers that are gone as interrupted"
        ),
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "could not mark the jobs of servers that are gone"),
    }
    match store.prune(retention) {
        Ok(pruned) => tracing::debug!(path = %store.path().display(), pruned, "job store ready"),
        Err(error) => tracing::warn!(%error, "could not prune old jobs"),
    }
    tidy_worktrees(store);
}

/// The dashboard for `/` beside `/mcp`, once the address is bound, when the job store is
/// usable; its login URL goes to stderr (stdout may be a client's). It answers to the
/// `--http-allowed-host` names too.
fn dashboard_routes(
    store: Result<Store, JobsError>,
    extra_hosts: Vec<String>,
) -> impl FnOnce(http::Mount<'_>) -> Option<Router> + use<> {
    move |mount| {
        let store = match store {
            Ok(store) => store,
            Err(error) => {
                tracing::warn!(%error, "no dashboard at /: the job store is unusable");
                return None;
            }
        };
        match DashboardState::new(store, mount.bound, &extra_hosts, mount.streams.clone()) {
            Ok(state) => {
                eprintln!("dashboard: {}", state.login_url());
                Some(dashboard::router(state))
            }
            Err(error) => {
                tracing::warn!(%error, "no dashboard at /");
                None
            }
        }
    }
}
