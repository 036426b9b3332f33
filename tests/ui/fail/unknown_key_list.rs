use modelctx::prelude::*;

/// Search books.
#[tool(colour = "blue")]
async fn search(query: String) -> String {
    query
}

fn main() {}
