//! The handler rmcp's HTTP service makes per session (2025-11-25) or per request
//! (2026-07-28): a handle on the one server, so every session shares its engine, jobs and
//! limits. With the conformance fixtures on, it also offers those.

use std::sync::Arc;

#[allow(deprecated)] // SetLevelRequestParams: MCP logging, see crate::mcp::logging
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
    ListToolsResult, PaginatedRequestParams, ServerConfig, SetLevelRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::conformance_fixtures::Fixture;
use crate::mcp::AgentServer;

#[derive(Clone)]
pub struct Shared {
    pub agents: Arc<AgentServer>,
    pub fixtures: bool,
}

impl ServerHandler for Shared {
    fn get_info(&self) -> ServerConfig {
        self.agents.get_info()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut listed = self.agents.list_tools(request, context).await?;
        if self.fixtures {
            listed.tools.extend(Fixture::tools());
        }
        Ok(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(fixture) = Fixture::named(&request.name).filter(|_| self.fixtures) {
            return Ok(fixture.call(&context).await.into());
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

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.agents.get_task(request, context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.agents.update_task(request, context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.agents.cancel_task(request, context).await
    }
}
