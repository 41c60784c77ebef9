//! Owns the MCP server's answers besides each tool's own: a tool call
//! counted and timed (arguments of the wrong shape answered as a tool
//! result), what the server declares (`get_info`: tools, the resources of
//! the in-chat view, the MCP Apps extension), and its one resource.

use rmcp::handler::server::tool::{IntoCallToolResult, ToolCallContext};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

use super::{HadoMcp, INSTRUCTIONS, ToolFailure};
use crate::tools::failure::misfit;
use crate::view;

#[tool_handler(router = self.tool_router)]
impl ServerHandler for HadoMcp {
    /// Dispatches to the tool, counted and timed. Arguments of the wrong
    /// shape are a tool result with `isError` that names the argument and
    /// what it takes (MCP 2025-11-25), so the model can correct itself; an
    /// unknown tool stays a JSON-RPC error.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Only known tool names become metric labels.
        let tool = if self.tool_router.has_route(request.name.as_ref()) {
            request.name.to_string()
        } else {
            "unknown".to_owned()
        };
        let started = std::time::Instant::now();
        let answer = self.dispatch(request, context).await;
        let outcome = match &answer {
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => "tool_error",
            Ok(_) => "ok",
            Err(_) => "protocol_error",
        };
        metrics::counter!("hado_mcp_tool_calls_total", "tool" => tool.clone(), "outcome" => outcome).increment(1);
        metrics::histogram!("hado_mcp_tool_call_duration_seconds", "tool" => tool)
            .record(started.elapsed().as_secs_f64());
        answer
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(view::capabilities())
            .with_server_info(
                Implementation::new("hado", env!("CARGO_PKG_VERSION")).with_title("Hado"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(view::list())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        view::read(&request).map(ReadResourceResponse::from)
    }
}

impl HadoMcp {
    /// Runs the tool, once its arguments fit it.
    async fn dispatch(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(problem) = misfit(&request.name, request.arguments.as_ref()) {
            return ToolFailure::Refused(problem).into_call_tool_result();
        }
        self.tool_router.call(ToolCallContext::new(self, request, context)).await
    }
}
