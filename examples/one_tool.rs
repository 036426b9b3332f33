//! The smallest useful server: one tool over stdio.
//!
//! Run: `cargo run --example one_tool`

use modelctx::prelude::*;

/// Add two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> modelctx::Result<()> {
    McpServer::new("adder").tool(AddTool).serve_stdio().await
}
