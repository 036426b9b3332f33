//! The one-tool server with rmcp 3, as its README writes it (shared by `rmcp-stdio` and
//! `rmcp-http`; `buildtime/rmcp` carries its own copy so it builds alone).

use rmcp::{
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::*,
    schemars, tool, tool_handler, tool_router, ErrorData as McpError, ServerHandler,
};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AddParams {
    /// left operand
    pub a: i64,
    /// right operand
    pub b: i64,
}

#[derive(Clone)]
pub struct Adder {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Adder {
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Add two numbers")]
    fn add(
        &self,
        Parameters(AddParams { a, b }): Parameters<AddParams>,
    ) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(
            a.wrapping_add(b).to_string(),
        )]))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Adder {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

impl Default for Adder {
    fn default() -> Self {
        Self::new()
    }
}
