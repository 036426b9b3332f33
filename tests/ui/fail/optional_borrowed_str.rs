use modelctx::prelude::*;

/// Search books.
#[tool]
async fn search(query: Option<&str>) -> String {
    query.unwrap_or_default().to_owned()
}

fn main() {}
