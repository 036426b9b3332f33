use modelctx::prelude::*;

/// Search books.
#[tool(name = "find", name = "lookup")]
async fn search(query: String) -> String {
    query
}

fn main() {}
