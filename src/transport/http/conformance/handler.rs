//! The handler rmcp's HTTP service makes per session (2025-11-25) or per request
//! (2026-07-28) when the fixtures are on: a handle on the one agents' server (every session
//! shares its engine, jobs and limits) that answers the fixtures' names itself and passes
//! every other request on.

use std::sync::Arc;

#[allow(deprecated)] // SetLevelRequestParams: MCP logging, see crate::mcp::logging
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::Fixtures;
use super::asking::{self, Asking};
use super::documents;
use super::schemas::SchemaFixture;
use super::task_table::TaskTable;
use super::task_tools::TaskFixture;
use super::tools::Fixture;
use crate::mcp::AgentServer;

#[derive(Clone)]
pub struct Fixtured {
    agents: Arc<AgentServer>,
    fixtures: Arc<Fixtures>,
}

impl Fixtured {
    pub fn new(agents: Arc<AgentServer>, fixtures: Arc<Fixtures>) -> Self {
        Self { agents, fixtures }
    }
}

impl ServerHandler for Fixtured {
    fn get_info(&self) -> ServerConfig {
        self.agents.get_info()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut listed = self.agents.list_tools(request, context).await?;
        listed.tools.extend(fixture_tools());
        listed.tools.extend(self.fixtures.tool_change.tools());
        Ok(listed)
    }

    /// A tool's definition, for rmcp to check the `Mcp-Param-*` headers of a call against.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        fixture_tools()
            .chain(self.fixtures.tool_change.tools())
            .find(|tool| tool.name == name)
            .or_else(|| self.agents.get_tool(name))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(fixture) = Fixture::named(&request.name) {
            return Ok(fixture
                .call(request.arguments.as_ref(), &context)
                .await
                .into());
        }
        if let Some(fixture) = Asking::named(&request.name) {
            return fixture.call(&request, &context, &self.fixtures.sealer);
        }
        if let Some(fixture) = TaskFixture::named(&request.name) {
            return fixture.call(&request, &context, &self.fixtures).await;
        }
        if let Some(fixture) = SchemaFixture::named(&request.name) {
            return Ok(fixture.call(request.arguments.as_ref()).into());
        }
        if let Some(result) = self.fixtures.tool_change.call(&request.name, &self.agents) {
            return Ok(result.into());
        }
        self.agents.call_tool(request, context).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.agents.on_initialized(context).await;
    }

    #[allow(deprecated)] // MCP logging: see crate::mcp::logging
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.agents.set_level(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let first_page = request.as_ref().is_none_or(|page| page.cursor.is_none());
        let mut listed = self.agents.list_resources(request, context).await?;
        if first_page {
            listed.resources.extend(documents::resources());
        }
        Ok(listed)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut listed = self
            .agents
            .list_resource_templates(request, context)
            .await?;
        listed.resource_templates.extend(documents::templates());
        Ok(listed)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if let Some(read) = documents::read(&request.uri) {
            return Ok(read.into());
        }
        self.agents.read_resource(request, context).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if request.uri == documents::WATCHED {
            return Ok(());
        }
        // Legacy in 2026-07-28, but what 2025-11-25 clients subscribe with.
        #[allow(deprecated)]
        self.agents.subscribe(request, context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        #[allow(deprecated)]
        self.agents.unsubscribe(request, context).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.agents.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.agents.listen(context).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let mut listed = self.agents.list_prompts(request, context).await?;
        listed.prompts.extend(documents::prompts());
        listed.prompts.push(asking::prompt());
        Ok(listed)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name == asking::PROMPT {
            return asking::get_prompt(&request, &context, &self.fixtures.sealer);
        }
        let fixture = documents::get_prompt(&request.name, request.arguments.as_ref());
        if let Some(prompt) = fixture {
            return Ok(prompt.into());
        }
        self.agents.get_prompt(request, context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.agents.complete(request, context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        if TaskTable::owns(&request.task_id) {
            let task = self.fixtures.tasks.get(&request.task_id)?;
            return Ok(GetTaskResult::new(task));
        }
        self.agents.get_task(request, context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if TaskTable::owns(&request.task_id) {
            return self
                .fixtures
                .tasks
                .update(&request.task_id, request.input_responses);
        }
        self.agents.update_task(request, context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if TaskTable::owns(&request.task_id) {
            return self.fixtures.tasks.cancel(&request.task_id);
        }
        self.agents.cancel_task(request, context).await
    }
}

/// Every fixture tool, as `tools/list` lists them after the agents'.
fn fixture_tools() -> impl Iterator<Item = Tool> {
    Fixture::tools()
        .chain(Asking::tools())
        .chain(TaskFixture::tools())
        .chain(SchemaFixture::tools())
}
