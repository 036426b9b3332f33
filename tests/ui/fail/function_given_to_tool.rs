use modelctx::prelude::*;

/// Add two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let _server = McpServer::new("calc").tool(add);
}
