use modelctx::prelude::*;

/// Search books.
#[tool(meta = "vendor/key: 1")]
async fn search(query: String) -> String {
    query
}

fn main() {}
