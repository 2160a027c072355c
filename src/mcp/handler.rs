//! The MCP handler: lists the tools and answers each call.
//!
//! An agent call becomes a job (see [`crate::jobs`]) and waits for it; if the job is still
//! running at the hand-off time, the call answers with the job's id and the job carries on.
//! Until then the call owns the run: rmcp never aborts a handler, but on
//! `notifications/cancelled` it fires `ctx.ct` and drops the response, so the handler stops
//! the job itself and waits for its teardown.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cli_agent_engine::RunRequest;
#[allow(deprecated)] // SetLevelRequestParams: see `set_level`
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CompleteRequestParams, CompleteResult, CreateTaskResult, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use super::ask::{self, BeyondBounds, NoLeave};
use super::calls::Shutdown;
use super::completion;
use super::delegate_questions::{Asking, Endpoint, QuestionsJob};
use super::logging;
use super::policy::{Policy, Refusal};
use super::progress::ProgressReporter;
use super::prompts;
use super::resources::{self, JobUri};
use super::result::{self, JobReport};
use super::session::session_key;
use super::subscriptions::{self, Subscriptions};
use super::tasks;
use super::tools::{self, CallRequest, Catalogue, JobTool, JobToolContext};
use crate::jobs::store::{JobId, Origin};
use crate::jobs::{AskFirst, Job, JobOptions, JobProgress, Jobs, StopReason};

const INSTRUCTIONS: &str = "Each agent tool runs one coding-agent CLI headless and returns its \
    answer. Calls are independent and may run at the same time; pass `session_id` from an \
    earlier result to continue that conversation. A call still running after the hand-off time \
    answers with a job_id: collect the answer with job_wait. For parallel work, start calls \
    with background: true and collect them with one job_wait. Cancelling a call stops the agent \
    and every process it started, until it has been handed off; after that, job_cancel does.";

pub struct AgentServer {
    pub jobs: Arc<Jobs>,
    pub catalogue: Catalogue,
    pub shutdown: Shutdown,
    pub heartbeat: Option<Duration>,
    /// The directories calls may use and the most they may ask for.
    pub policy: Policy,
    /// Whether a call past a bound the person may lift asks them, and how long it waits.
    pub beyond_bounds: BeyondBounds,
    /// Whether a question nobody can be asked through the client (a delegate's, or about a
    /// call past the bounds) waits for the person's answer on the dashboard
    /// (`--park-questions`) instead of being denied.
    pub park_questions: bool,
    /// A blocking call still running after this hands off (0: never), unless it says otherwise.
    pub handoff_after: Duration,
    /// The most characters of an answer a result carries.
    pub result_budget: usize,
    /// Which job resources each session subscribed to.
    pub subscriptions: Arc<Subscriptions>,
}

impl ServerHandler for AgentServer {
    #[allow(deprecated)] // the logging capability: see `set_level`
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_completions()
            .enable_tasks()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        logging::session_started(&context.peer, &context.extensions);
        let key = session_key(&context.extensions);
        self.subscriptions
            .open(key, context.peer, self.jobs.changes());
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.catalogue.tools();
        tools.extend(JobTool::ALL.map(JobTool::tool));
        Ok(ListToolsResult {
            tools,
            ..ListToolsResult::default()
        })
    }

    #[allow(deprecated)] // MCP logging (SEP-2577 deprecates it; 2025-11-25 clients use it)
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        logging::set_level(request.level, &context)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _listening = logging::listen_during(&context);
        if let Some(tool) = JobTool::named(&request.name) {
            let job_context = JobToolContext {
                jobs: &self.jobs,
                budget: self.result_budget,
                cancelled: &context.ct,
                progress: JobProgress::default(),
            };
            let reporter = self.progress(&context, tool.name(), &job_context.progress, &context.ct);
            let result = tools::call_job_tool(tool, request.arguments, job_context).await;
            if let Some(reporter) = reporter {
                reporter.finish().await;
            }
            return Ok(result.into());
        }
        let Some(agent) = self.catalogue.agent(&request.name) else {
            let message = format!(
                "unknown tool `{}`: this server offers {}, job_wait, job_result, job_cancel, job_list",
                request.name,
                self.catalogue.names()
            );
            return Err(ErrorData::invalid_params(message, None));
        };
        let read = match self.beyond_bounds {
            BeyondBounds::Ask { .. } => tools::call_request_to_ask,
            BeyondBounds::Refuse => tools::call_request,
        };
        let call = match read(agent, request.arguments, &self.policy) {
            Ok(call) => call,
            Err(error) => return Ok(error.to_result().into()),
        };
        let ask_first = match self.leave_past_bounds(&call, &context).await {
            Ok(ask_first) => ask_first,
            Err(refused) => return Ok(refused.into()),
        };
        let wants_task = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        if wants_task {
            return Ok(self.start_task(call, ask_first, context.peer.clone()).await);
        }
        Ok(self.call(call, ask_first, context).await.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.as_ref().and_then(|page| page.cursor.as_deref());
        resources::list(&self.jobs, cursor).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult {
            resource_templates: resources::templates(),
            ..ListResourceTemplatesResult::default()
        })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let read = resources::read(&self.jobs, &request.uri, self.result_budget).await?;
        Ok(read.into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = &request.uri;
        let job = JobUri::parse(uri).map_err(|error| error.into_error(uri))?;
        self.jobs
            .record_of(&job.id)
            .await
            .map_err(|error| resources::ResourceError::from(error).into_error(uri))?;
        self.subscriptions
            .subscribe(&session_key(&context.extensions), uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions
            .unsubscribe(&session_key(&context.extensions), &request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(subscriptions::accepted_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        subscriptions::listen(context, self.jobs.changes()).await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult {
            prompts: prompts::list(),
            ..ListPromptsResult::default()
        })
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let prompt = prompts::get(&request.name, request.arguments.as_ref(), &self.catalogue)?;
        Ok(prompt.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        completion::complete(&request, &self.catalogue, &self.jobs).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let task = tasks::get(&self.jobs, &request.task_id, self.result_budget).await?;
        Ok(GetTaskResult::new(task))
    }

    async fn update_task(
        &self,
        _request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // No job asks its caller for input: an update has nothing to answer.
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::cancel(&self.jobs, &request.task_id).await
    }
}

impl AgentServer {
    /// A call past bounds the person may lift runs only with their leave: `Ok(None)` within
    /// the bounds or with their leave through the client; `Ok(Some(ask))` when nobody could be
    /// asked there and questions are parked (`--park-questions`): the job asks on the
    /// dashboard before it starts. Otherwise the first bound's refusal, as if nobody had been
    /// asked.
    async fn leave_past_bounds(
        &self,
        call: &CallRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<AskFirst>, CallToolResult> {
        let Some(first) = call.beyond_bounds.first() else {
            return Ok(None);
        };
        let asking =
            self.beyond_bounds
                .ask(&context.peer, call.agent, &call.run, &call.beyond_bounds);
        let answer = tokio::select! {
            answer = asking => answer,
            () = context.ct.cancelled() => Err(NoLeave::Cancelled),
        };
        match answer {
            Ok(()) => Ok(None),
            Err(no_leave) if self.park_questions && no_leave.may_park() => Ok(ask::ask_first(
                call.agent,
                &call.run,
                &call.beyond_bounds,
                &no_leave,
            )),
            Err(_) => Err(result::error_result(first.to_string())),
        }
    }

    /// Start the call as a job and answer with it as a task (the client declared the
    /// extension); a call that can't start answers as a plain tool result.
    async fn start_task(
        &self,
        call: CallRequest,
        ask_first: Option<AskFirst>,
        peer: Peer<RoleServer>,
    ) -> CallToolResponse {
        match self
            .start_job(call, ask_first, Origin::Background, peer)
            .await
        {
            Ok(job) => CallToolResponse::Task(CreateTaskResult::new(tasks::created(&job))),
            Err(refused) => refused.into(),
        }
    }

    /// Prepare and start a call's job, which first asks `ask_first` on the dashboard if
    /// given; a refusal is the call's result. The CLI's own permission questions, if it can
    /// forward them, go to `peer` while the job runs.
    async fn start_job(
        &self,
        mut call: CallRequest,
        ask_first: Option<AskFirst>,
        origin: Origin,
        peer: Peer<RoleServer>,
    ) -> Result<Arc<Job>, CallToolResult> {
        let agent = call.agent;
        if self.shutdown.is_triggered() {
            return Err(result::shutting_down(agent));
        }
        let id = JobId::random();
        let client = ask::client_name(&peer);
        let asking = self.asking(&id, peer, &call.run).await;
        let questions = Endpoint::open(agent, &call.run, asking).await;
        call.run.questions = questions.as_ref().map(Endpoint::address);
        let prepared = self
            .jobs
            .engine()
            .prepare(agent, call.run)
            .map_err(|error| result::setup_failed(agent, &error))?;
        self.jobs
            .check_tree(prepared.request())
            .await
            .map_err(|refusal| result::error_result(refusal.to_string()))?;
        let options = job_options(call.save_to, &call.beyond_bounds, ask_first, client);
        let job = self.jobs.start(id, prepared, origin, options).await;
        if let Some(endpoint) = questions {
            let finished = job.clone();
            tokio::spawn(async move {
                finished.finished().await;
                endpoint.close().await;
            });
        }
        Ok(job)
    }

    /// Who answers the permission questions of job `id`'s `run`: the person through `peer`,
    /// or the dashboard; recorded in the job's transcript.
    async fn asking(&self, id: &JobId, peer: Peer<RoleServer>, run: &RunRequest) -> Asking {
        Asking {
            peer: Some(peer),
            how: self.beyond_bounds,
            transcript: self.jobs.transcript(id).await,
            job: Some(QuestionsJob {
                jobs: self.jobs.clone(),
                id: id.clone(),
                park: self.park_questions,
            }),
            wait: run.person_wait.clone(),
        }
    }

    async fn call(
        &self,
        call: CallRequest,
        ask_first: Option<AskFirst>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let agent = call.agent;
        let (background, handoff_after_secs) = (call.background, call.handoff_after_secs);
        let origin = if background {
            Origin::Background
        } else {
            Origin::Call
        };
        let job = match self
            .start_job(call, ask_first, origin, context.peer.clone())
            .await
        {
            Ok(job) => job,
            Err(refused) => return refused,
        };
        if background {
            return JobReport::of_job(&job, self.result_budget).into_result();
        }
        let handoff = handoff_after_secs.map_or(self.handoff_after, Duration::from_secs);
        // Until the hand-off, the call owns the run: if this handler is dropped, it stops.
        let owned = job.cancel_token().clone().drop_guard();
        let reporter = self.progress(&context, agent.name(), &job.progress, job.cancel_token());
        let handed_off = tokio::select! {
            _ = job.finished() => false,
            () = sleep_or_never(handoff) => true,
            // Only the person answers on the dashboard: no use holding the call meanwhile.
            () = self.jobs.until_waiting(&job) => true,
            () = context.ct.cancelled() => {
                tracing::info!(%agent, id = %context.id, "the client cancelled the call");
                job.stop(StopReason::CallCancelled);
                job.finished().await;
                false
            }
        };
        if handed_off {
            owned.disarm();
            tracing::info!(%agent, job = %job.id, "handed off: the run carries on as a job");
        }
        if let Some(reporter) = reporter {
            reporter.finish().await;
        }
        JobReport::of_job(&job, self.result_budget).into_result()
    }

    /// Progress reports for a call that asked for them, until `stop` fires or the call ends.
    fn progress(
        &self,
        context: &RequestContext<RoleServer>,
        label: &str,
        progress: &JobProgress,
        stop: &CancellationToken,
    ) -> Option<ProgressReporter> {
        let token = context.meta.get_progress_token()?;
        Some(ProgressReporter::start(
            context.peer.clone(),
            token,
            label.to_owned(),
            progress.clone(),
            self.heartbeat,
            stop.child_token(),
        ))
    }
}

async fn sleep_or_never(after: Duration) {
    if after.is_zero() {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep(after).await;
}

/// A call's job options: ask `ask_first` on the dashboard before it starts, or else record the
/// bounds the person already let it past through `client`.
fn job_options(
    save_to: Option<PathBuf>,
    beyond_bounds: &[Refusal],
    ask_first: Option<AskFirst>,
    client: String,
) -> JobOptions {
    match ask_first {
        Some(ask) => JobOptions {
            save_to,
            ask_first: Some(ask),
            ..JobOptions::default()
        },
        None => JobOptions {
            save_to,
            allowed_past: ask::allowed_past(beyond_bounds),
            asked_before: Vec::from_iter(ask::allowed_past_question(beyond_bounds, client)),
            ask_first: None,
        },
    }
}
