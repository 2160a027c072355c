//! The MCP handler: lists the tools and answers each request. An agent tool's call is
//! `agent_call`'s; a job tool's is `tools`', carried out here with the person's questions
//! about the jobs it waits on, for a client on 2026-07-28.

use std::sync::Arc;
use std::time::Duration;

#[allow(deprecated)] // SetLevelRequestParams: see `set_level`
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use super::ask::{BeyondBounds, Binding, Board, RequestStates};
use super::completion;
use super::instructions::instructions;
use super::launch::Launcher;
use super::logging;
use super::models_resource;
use super::pending::Pending;
use super::policy::Policy;
use super::progress::ProgressReporter;
use super::prompts;
use super::resources::{self, JobUri};
use super::session::session_key;
use super::subscriptions::{self, Subscriptions};
use super::tasks;
use super::tools::{self, Catalogue, JobToolContext};
use crate::jobs::{JobProgress, Jobs};
use crate::offer::JobTool;

pub struct AgentServer {
    pub jobs: Arc<Jobs>,
    pub catalogue: Catalogue,
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
    /// The questions waiting for a 2026-07-28 client to carry them to the person.
    pub board: Arc<Board>,
    /// What each `requestState` this server gave out stands for.
    pub states: Arc<RequestStates<Pending>>,
}

impl ServerHandler for AgentServer {
    #[allow(deprecated)] // the logging capability: see `set_level`
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
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
            .with_instructions(instructions(&self.catalogue))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        logging::session_started(&context.peer, &context.extensions);
        let key = session_key(&context.extensions);
        let peer = context.peer.clone();
        self.subscriptions
            .open(key, context.peer, self.jobs.changes());
        tools::announce_changes(peer, self.catalogue.changes());
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.catalogue.tools();
        tools.extend(JobTool::ALL.map(tools::job_tool));
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
            return self.call_job_tool(tool, request, context).await;
        }
        let Some(agent) = self.catalogue.agent(&request.name) else {
            let message = format!(
                "unknown tool `{}`: this server offers {}, job_wait, job_result, job_cancel, job_list",
                request.name,
                self.catalogue.names()
            );
            return Err(ErrorData::invalid_params(message, None));
        };
        self.call_agent(agent, request, context).await
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
            resource_templates: resources::templates()
                .into_iter()
                .chain([models_resource::template()])
                .collect(),
            ..ListResourceTemplatesResult::default()
        })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = &request.uri;
        if let Some(name) = models_resource::agent_of(uri) {
            let config = self.jobs.engine().config();
            let read = models_resource::read(&self.catalogue, config, uri, name).await?;
            return Ok(read.into());
        }
        let read = resources::read(&self.jobs, uri, self.result_budget).await?;
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
        subscriptions::listen(context, self.jobs.changes(), self.catalogue.changes()).await;
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
        let task = tasks::get(
            &self.jobs,
            &self.board,
            &request.task_id,
            self.result_budget,
        )
        .await?;
        Ok(GetTaskResult::new(task))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::update(
            &self.jobs,
            &self.board,
            &request.task_id,
            &request.input_responses,
        )
        .await
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
    /// What starting a job needs, to take into a task of its own.
    pub(super) fn launcher(&self) -> Launcher {
        Launcher {
            jobs: self.jobs.clone(),
            beyond_bounds: self.beyond_bounds,
            park_questions: self.park_questions,
        }
    }

    /// A job tool's call. A `job_wait` whose client takes input requests answers with the
    /// person's questions about the jobs it waits on, as soon as there are any; its retry
    /// hands the answers over and waits on.
    async fn call_job_tool(
        &self,
        tool: JobTool,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let binding = Binding::of(&request.name, request.arguments.as_ref());
        if let Some(state) = &request.request_state {
            let Pending::Wait(jobs) = self.opened(&binding, state)? else {
                return Err(ErrorData::invalid_params(
                    super::ask::StateRefused.to_string(),
                    None,
                ));
            };
            let responses = request.input_responses.clone().unwrap_or_default();
            self.board.answer(&jobs, &responses);
        }
        let carried = match tool {
            JobTool::Wait => tools::waited_jobs(request.arguments.as_ref()),
            _ => Vec::new(),
        };
        let job_context = JobToolContext {
            jobs: &self.jobs,
            budget: self.result_budget,
            cancelled: &context.ct,
            progress: JobProgress::default(),
        };
        let reporter = self.progress(&context, tool.name(), &job_context.progress, &context.ct);
        let response = tokio::select! {
            result = tools::call_job_tool(tool, request.arguments, job_context) => result.into(),
            questions = self.questions_for(&context, &carried) => {
                let (state, _) = self.states.seal(&binding, Pending::Wait(carried.clone()));
                InputRequiredResult::new(Some(questions), Some(state)).into()
            }
        };
        if let Some(reporter) = reporter {
            reporter.finish().await;
        }
        Ok(response)
    }

    /// Progress reports for a call that asked for them, until `stop` fires or the call ends.
    pub(super) fn progress(
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
