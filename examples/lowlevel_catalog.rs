//! The product catalog of seed 004: `tools/list` and `tools/call` by hand, then arguments
//! validated against a JSON Schema by hand (`SchemaValidator`, the seed's `fromJsonSchema`) so a
//! bad call is a tool error the model can read.
//!
//! Run: `cargo run --example lowlevel_catalog` (serves over stdio).

use std::sync::Arc;

use modelctx::prelude::*;
use modelctx::server::SchemaValidator;
use modelctx::types::*;
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
    Ok(ListToolsResult::new(vec![tool]))
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

/// The second version: validates the arguments against a JSON Schema before touching them,
/// with the SDK's validator (the same one, and the same error text, as the high-level path).
fn checked(
    validator: Arc<SchemaValidator>,
) -> impl Fn(RequestContext, CallToolRequestParams) -> std::future::Ready<Result<CallToolResult>> {
    move |_, params| {
        if params.name != "search" {
            return std::future::ready(Ok(CallToolResult::error(format!(
                "Unknown tool: {}",
                params.name
            ))));
        }
        let args = Value::Object(params.arguments.unwrap_or_default());
        let result = match validator.validate(&args) {
            Ok(()) => CallToolResult::text(search(args["query"].as_str().unwrap_or_default())),
            Err(reason) => CallToolResult::error(reason),
        };
        std::future::ready(Ok(result))
    }
}

/// The catalog server without validation (the seed's first `tools/call`).
pub fn unchecked_server() -> Server {
    let mut server = Server::new("catalog");
    server.version("1.0.0");
    server
        .on_list_tools(list_tools)
        .on_call_tool(call_unchecked);
    server
}

/// The catalog server: registering `tools/call` again replaces the unchecked handler.
pub fn server() -> Result<Server> {
    let validator = SchemaValidator::compile(&json!({
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"]
    }))?;
    let mut server = unchecked_server();
    server.on_call_tool(checked(Arc::new(validator)));
    Ok(server)
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    server()?.serve_stdio().await
}
