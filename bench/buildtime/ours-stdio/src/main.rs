//! The one-tool server with this SDK, over stdio (as `examples/one_tool.rs`, returning text).

use modelctx::prelude::*;

/// Add two numbers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    a.wrapping_add(b).to_string()
}

#[tokio::main]
async fn main() -> modelctx::Result<()> {
    McpServer::new("adder").tool(AddTool).serve_stdio().await
}
