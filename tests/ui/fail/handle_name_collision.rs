use modelctx::prelude::*;

/// Add two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The sum a user computed earlier.
struct AddTool;

fn main() {
    let _ = AddTool;
    let _server = McpServer::new("calc").tool(AddTool);
}
