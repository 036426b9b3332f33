//! The same one-tool server with the official Rust SDK (rmcp 3), over stdio, as its README
//! writes it.

use mcp_bench::rmcp_adder::Adder;
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Adder::new().serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}
