//! The MCP handler: lists the tools and runs one call from arguments to result.
//!
//! Each run is a task of its own on the server's tracker, so a panic inside it becomes that
//! call's error, and the shutdown can wait for every teardown at once. rmcp never aborts a
//! handler: on `notifications/cancelled` it fires `ctx.ct` and drops the response, so the
//! handler cancels the run itself and waits for its teardown.

use std::sync::Arc;
use std::time::Duration;

use cli_agent_engine::{AgentEvent, AgentKind, Engine, Outcome, RunRequest, SetupError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::task::JoinError;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::calls::{ActiveCalls, Shutdown};
use super::policy::Policy;
use super::progress::{ProgressFeed, ProgressReporter};
use super::result;
use super::tools::{self, Catalogue};

const INSTRUCTIONS: &str = "Each tool runs one coding-agent CLI headless and returns its \
    answer. Calls are independent and may run at the same time; pass `session_id` from an \
    earlier result to continue that conversation. Cancelling a call stops the agent and every \
    process it started.";

pub struct AgentServer {
    pub engine: Arc<Engine>,
    pub catalogue: Catalogue,
    pub calls: ActiveCalls,
    pub shutdown: Shutdown,
    pub runs: TaskTracker,
    pub heartbeat: Option<Duration>,
    /// The directories calls may use and the most they may ask for.
    pub policy: Policy,
}

impl ServerHandler for AgentServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: self.catalogue.tools(),
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(agent) = self.catalogue.agent(&request.name) else {
            let message = format!(
                "unknown tool `{}`: this server offers {}",
                request.name,
                self.catalogue.names()
            );
            return Err(ErrorData::invalid_params(message, None));
        };
        let result = match tools::run_request(agent, request.arguments, &self.policy) {
            Ok(run) => self.call(run, context).await,
            Err(error) => result::bad_arguments(&error),
        };
        Ok(result.into())
    }
}

impl AgentServer {
    async fn call(
        &self,
        request: RunRequest,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let agent = request.agent;
        if self.shutdown.is_triggered() {
            return result::shutting_down(agent);
        }
        let cancel = self.shutdown.run_token();
        // Should this handler ever be dropped unfinished, its run must not live on.
        let _cancel_on_drop = cancel.clone().drop_guard();
        let call = self.calls.register(cancel.clone());
        let (feed, reporter) = self.progress(&context, agent, &cancel).unzip();
        let mut task = self
            .runs
            .spawn(run_one(self.engine.clone(), request, cancel.clone(), feed));
        let joined = tokio::select! {
            joined = &mut task => joined,
            () = context.ct.cancelled() => {
                tracing::info!(%agent, id = %context.id, "the client cancelled the call");
                cancel.cancel();
                task.await
            }
        };
        if let Some(reporter) = reporter {
            reporter.finish().await;
        }
        match joined {
            Ok(Ok(outcome)) => result::from_outcome(outcome, call.server_stop()),
            Ok(Err(error)) => result::setup_failed(agent, &error),
            Err(error) => {
                let panic = panic_message(error);
                tracing::error!(%agent, %panic, "a run panicked");
                result::internal_error(agent, &panic)
            }
        }
    }

    /// Progress reports for a call that asked for them, stopped by the run's cancellation.
    fn progress(
        &self,
        context: &RequestContext<RoleServer>,
        agent: AgentKind,
        cancel: &CancellationToken,
    ) -> Option<(ProgressFeed, ProgressReporter)> {
        let token = context.meta.get_progress_token()?;
        let peer = context.peer.clone();
        let stop = cancel.child_token();
        Some(ProgressReporter::start(
            peer,
            token,
            agent,
            self.heartbeat,
            stop,
        ))
    }
}

async fn run_one(
    engine: Arc<Engine>,
    request: RunRequest,
    cancel: CancellationToken,
    feed: Option<ProgressFeed>,
) -> Result<Outcome, SetupError> {
    debug_panic(&request.prompt);
    let mut observe = |event: &AgentEvent| {
        if let Some(feed) = &feed {
            feed.observe(event);
        }
    };
    engine.run(request, cancel, &mut observe).await
}

/// Debug builds only: a prompt containing the value of `CAM_DEBUG_PANIC` panics inside its
/// run, so the end-to-end tests can prove that a panic stays inside its call.
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

fn panic_message(error: JoinError) -> String {
    match error.try_into_panic() {
        Ok(panic) => panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned()),
        Err(error) => error.to_string(),
    }
}
