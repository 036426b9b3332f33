//! The one-tool server with this SDK, over Streamable HTTP on 127.0.0.1 (port from argv, 0 =
//! any); prints its URL.

use modelctx::prelude::*;

/// Add two numbers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    a.wrapping_add(b).to_string()
}

#[tokio::main]
async fn main() -> modelctx::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("http://{}/mcp", listener.local_addr()?);
    let server = McpServer::new("adder").tool(AddTool);
    let config = modelctx::transport::HttpConfig::default();
    server
        .serve_http_on(listener, config, std::future::pending())
        .await
}
