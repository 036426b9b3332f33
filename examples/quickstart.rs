//! Build a server from a `#[tool]` function, connect the in-memory client, list and call the
//! tool, print the results.
//!
//! Run: `cargo run --example quickstart`

use modelctx::prelude::*;
use serde_json::json;

/// Add two integers.
#[tool]
async fn add(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> Result<()> {
    let server = McpServer::new("quickstart").version("1.0.0").tool(AddTool);
    let client = Client::connect(server).await?;
    for tool in client.list_tools().await?.tools {
        let schema = serde_json::Value::Object(tool.input_schema);
        println!(
            "tool: {} - {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
        println!("  input schema: {schema}");
    }
    let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
    println!("add(2, 3) = {}", result.content[0].as_text().unwrap_or("?"));
    let refused = client.call_tool("add", json!({"a": 2})).await?;
    println!(
        "add(2) -> isError: {}",
        refused.content[0].as_text().unwrap_or("?")
    );
    client.close().await;
    Ok(())
}
