//! The product catalog of seed 004: `tools/list` and `tools/call` by hand, then arguments
//! validated by hand so a bad call is a tool error the model can read.
//!
//! Run: `cargo run --example lowlevel_catalog` (serves over stdio).

use mcp::prelude::*;
use serde_json::{json, Value};

struct Product {
    name: &'static str,
    #[allow(dead_code)]
    price: u32,
}

const CATALOG: &[Product] = &[
    Product {
        name: "Espresso cup",
        price: 12,
    },
    Product {
        name: "Travel mug",
        price: 24,
    },
    Product {
        name: "Mug rack",
        price: 36,
    },
];

fn search(query: &str) -> String {
    let query = query.to_lowercase();
    CATALOG
        .iter()
        .filter(|p| p.name.to_lowercase().contains(&query))
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join("\n")
}

async fn list_tools(_: RequestContext, _: PaginatedRequestParams) -> Result<ListToolsResult> {
    let tool = Tool::new(
        "search",
        "Search the product catalog",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Substring to match against product names"}
            },
            "required": ["query"]
        }),
    );
    Ok(ListToolsResult {
        tools: vec![tool],
        ..Default::default()
    })
}

/// The first version: trusts its arguments. `{ "query": 42 }` fails inside the handler and the
/// client sees a protocol error, not a tool result.
async fn call_unchecked(
    _: RequestContext,
    params: CallToolRequestParams,
) -> Result<CallToolResult> {
    if params.name != "search" {
        return Ok(CallToolResult::error(format!(
            "Unknown tool: {}",
            params.name
        )));
    }
    let args = params.arguments.unwrap_or_default();
    let query: String = serde_json::from_value(args.get("query").cloned().unwrap_or(Value::Null))?;
    Ok(CallToolResult::text(search(&query)))
}

/// Hand-written validation of the one argument: the reasons a model can act on.
fn validate(arguments: &serde_json::Map<String, Value>) -> std::result::Result<&str, String> {
    match arguments.get("query") {
        None => Err("query is required".into()),
        Some(Value::String(q)) => Ok(q),
        Some(_) => Err("query must be string".into()),
    }
}

/// The second version: validates before touching the arguments.
async fn call_checked(_: RequestContext, params: CallToolRequestParams) -> Result<CallToolResult> {
    if params.name != "search" {
        return Ok(CallToolResult::error(format!(
            "Unknown tool: {}",
            params.name
        )));
    }
    let args = params.arguments.unwrap_or_default();
    match validate(&args) {
        Ok(query) => Ok(CallToolResult::text(search(query))),
        Err(reason) => Ok(CallToolResult::error(reason)),
    }
}

/// The catalog server without validation (the seed's first `tools/call`).
pub fn unchecked_server() -> Server {
    let mut server = Server::new("catalog").version("1.0.0");
    server
        .on_list_tools(list_tools)
        .on_call_tool(call_unchecked);
    server
}

/// The catalog server: registering `tools/call` again replaces the unchecked handler.
pub fn server() -> Server {
    let mut server = unchecked_server();
    server.on_call_tool(call_checked);
    server
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    server().serve_stdio().await
}
