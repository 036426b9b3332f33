//! Two tools behind one `tools/call` handler that routes on the name (seed 001, tutorial 002).
//!
//! Run: `cargo run --example lowlevel_two_tools` (serves over stdio).

use modelctx::prelude::*;
use modelctx::types::*;
use serde::Deserialize;
use serde_json::{json, Value};

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "search_books",
            "Search the catalog by title or author.",
            json!({
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query", "limit"]
            }),
        ),
        Tool::new(
            "add_book",
            "Add a book to the catalog.",
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "author": {"type": "string"},
                    "year": {"type": "integer"}
                },
                "required": ["title", "author", "year"]
            }),
        ),
    ]
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
    limit: i64,
}

#[derive(Deserialize)]
struct AddArgs {
    title: String,
    author: String,
    year: i64,
}

async fn call_tool(_ctx: RequestContext, params: CallToolRequestParams) -> Result<CallToolResult> {
    let args = Value::Object(params.arguments.unwrap_or_default());
    let text = match params.name.as_str() {
        "search_books" => {
            let a: SearchArgs = serde_json::from_value(args)?;
            format!(
                "Found 3 books matching '{}' (showing up to {}).",
                a.query, a.limit
            )
        }
        "add_book" => {
            let a: AddArgs = serde_json::from_value(args)?;
            format!("Added '{}' by {} ({}).", a.title, a.author, a.year)
        }
        // The low-level server forwards any name here; failing turns the call into -32603.
        other => return Err(McpError::internal(format!("Unknown tool: {other}"))),
    };
    Ok(CallToolResult::text(text))
}

/// The server of this example.
pub fn server() -> Server {
    let mut server = Server::new("Bookshop");
    server
        .on_list_tools(|_, _| async { Ok(ListToolsResult::new(tools())) })
        .on_call_tool(call_tool);
    server
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    server().serve_stdio().await
}
