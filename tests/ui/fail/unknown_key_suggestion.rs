use modelctx::prelude::*;

/// Search books.
#[tool(titel = "Search")]
async fn search(query: String) -> String {
    query
}

fn main() {}
