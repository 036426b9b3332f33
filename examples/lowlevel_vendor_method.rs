//! A method MCP does not define, with typed params validated before the handler runs
//! (seed 001, tutorial 006).
//!
//! Run: `cargo run --example lowlevel_vendor_method` (serves over stdio).

use modelctx::prelude::*;
use modelctx::types::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Params of `bookshop/reindex`.
#[derive(Debug, Deserialize)]
pub struct ReindexParams {
    /// Rebuild everything (default false).
    #[serde(default)]
    pub full: bool,
    /// Request metadata, parsed like every other method's.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Meta>,
}

/// Result of `bookshop/reindex`.
#[derive(Debug, Serialize)]
pub struct ReindexResult {
    /// Books indexed.
    pub indexed: u32,
}

async fn reindex(_ctx: RequestContext, params: ReindexParams) -> Result<ReindexResult> {
    let _rebuild_everything = params.full;
    let _trace = params.meta;
    Ok(ReindexResult { indexed: 3 })
}

/// The server of this example.
pub fn server() -> Result<Server> {
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
            );
            Ok(ListToolsResult::new(vec![tool]))
        })
        .on_call_tool(|_, params| async move {
            let args = params.arguments.unwrap_or_default();
            Ok(CallToolResult::text(format!(
                "Found 3 books matching {} (showing up to {}).",
                args.get("query").cloned().unwrap_or_default(),
                args.get("limit").cloned().unwrap_or_default()
            )))
        });
    server.add_request_handler("bookshop/reindex", reindex)?;
    Ok(server)
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    server()?.serve_stdio().await
}
