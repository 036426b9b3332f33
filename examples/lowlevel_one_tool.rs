//! The `search_books` tool written by hand on the low-level server (seed 001, tutorial 001).
//!
//! Run: `cargo run --example lowlevel_one_tool` (serves over stdio).

use modelctx::prelude::*;
use modelctx::types::*;
use serde::Deserialize;
use serde_json::{json, Value};

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
}

async fn list_tools(
    _ctx: RequestContext,
    _params: PaginatedRequestParams,
) -> Result<ListToolsResult> {
    Ok(ListToolsResult::new(vec![search_books_tool()]))
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
    limit: i64,
}

async fn call_tool(_ctx: RequestContext, params: CallToolRequestParams) -> Result<CallToolResult> {
    // Nothing validated these arguments: a missing `limit` fails here, and the client sees
    // `-32603 Internal server error`.
    let args: SearchArgs =
        serde_json::from_value(Value::Object(params.arguments.unwrap_or_default()))?;
    Ok(CallToolResult::text(format!(
        "Found 3 books matching '{}' (showing up to {}).",
        args.query, args.limit
    )))
}

/// The server of this example.
pub fn server() -> Server {
    let mut server = Server::new("Bookshop");
    server.on_list_tools(list_tools).on_call_tool(call_tool);
    server
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    server().serve_stdio().await
}
