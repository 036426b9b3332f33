//! `_meta` on a result: data for the client application, not the model (seed 001, tutorial 004).
//!
//! Run: `cargo run --example lowlevel_meta` (serves over stdio).

use modelctx::prelude::*;
use modelctx::types::*;
use serde_json::{json, Map};

async fn call_tool(_ctx: RequestContext, params: CallToolRequestParams) -> Result<CallToolResult> {
    let args = params.arguments.unwrap_or_default();
    let query = args
        .get("query")
        .and_then(|q| q.as_str())
        .ok_or_else(|| McpError::internal("missing argument `query`"))?;
    let mut meta = Map::new();
    meta.insert(
        "bookshop/record_ids".into(),
        json!(["bk_17", "bk_42", "bk_99"]),
    );
    Ok(
        CallToolResult::text(format!("Found 3 books matching '{query}'."))
            .with_structured(json!({"matches": 3, "query": query}))
            .with_meta(meta),
    )
}

/// The server of this example.
pub fn server() -> Server {
    let mut server = Server::new("Bookshop");
    server
        .on_list_tools(|_, _| async {
            let tool = Tool::new(
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
            }));
            Ok(ListToolsResult::new(vec![tool]))
        })
        .on_call_tool(call_tool);
    server
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    server().serve_stdio().await
}
