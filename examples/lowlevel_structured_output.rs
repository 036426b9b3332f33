//! Structured output by hand: an `outputSchema` on the tool, `structuredContent` on the result
//! (seed 001, tutorial 003).
//!
//! Run: `cargo run --example lowlevel_structured_output` (serves over stdio).

use modelctx::prelude::*;
use modelctx::types::*;
use serde_json::json;

fn search_books_tool() -> Tool {
    Tool::new(
        "search_books",
        "Search the catalog by title or author.",
        json!({
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query", "limit"]
        }),
    )
    .with_output_schema(json!({
        "type": "object",
        "properties": {"matches": {"type": "integer"}, "query": {"type": "string"}},
        "required": ["matches", "query"]
    }))
}

async fn call_tool(_ctx: RequestContext, params: CallToolRequestParams) -> Result<CallToolResult> {
    let args = params.arguments.unwrap_or_default();
    let query = args
        .get("query")
        .and_then(|q| q.as_str())
        .ok_or_else(|| McpError::internal("missing argument `query`"))?;
    Ok(
        CallToolResult::text(format!("Found 3 books matching '{query}'."))
            .with_structured(json!({"matches": 3, "query": query})),
    )
}

/// The server of this example.
pub fn server() -> Server {
    let mut server = Server::new("Bookshop");
    server.version("2.0.0");
    server
        .on_list_tools(|_, _| async { Ok(ListToolsResult::new(vec![search_books_tool()])) })
        .on_call_tool(call_tool);
    server
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    server().serve_stdio().await
}
