//! Build a server, connect the in-memory client, list and call a tool, print the results.
//!
//! Run: `cargo run --example quickstart`

use mcp::prelude::*;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<()> {
    let mut server = Server::new("quickstart").version("1.0.0");
    server
        .on_list_tools(|_, _| async {
            let add = Tool::new(
                "add",
                "Add two integers.",
                json!({
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"]
                }),
            );
            Ok(ListToolsResult {
                tools: vec![add],
                ..Default::default()
            })
        })
        .on_call_tool(|_, params| async move {
            let args = params.arguments.unwrap_or_default();
            let number = |k: &str| args.get(k).and_then(|v| v.as_i64());
            match (params.name.as_str(), number("a"), number("b")) {
                ("add", Some(a), Some(b)) => Ok(CallToolResult::text(format!("{}", a + b))),
                ("add", _, _) => Ok(CallToolResult::error("a and b must be integers")),
                (other, _, _) => Ok(CallToolResult::error(format!("Unknown tool: {other}"))),
            }
        });

    let client = Client::connect(server).await?;
    for tool in client.list_tools().await?.tools {
        println!(
            "tool: {} - {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }
    let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
    println!("add(2, 3) = {}", result.content[0].as_text().unwrap_or("?"));
    client.close().await;
    Ok(())
}
