use modelctx::prelude::*;

/// Search books.
#[tool]
async fn search(query: String, #[arg(rename = "query")] text: Option<String>) -> String {
    format!("{query} {text:?}")
}

fn main() {}
