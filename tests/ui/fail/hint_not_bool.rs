use modelctx::prelude::*;

/// Search books.
#[tool(read_only = "yes")]
async fn search(query: String) -> String {
    query
}

fn main() {}
