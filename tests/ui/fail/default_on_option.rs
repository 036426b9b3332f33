use modelctx::prelude::*;

/// Search books.
#[tool]
async fn search(query: String, #[arg(default = Some(10))] limit: Option<u32>) -> String {
    format!("{query} {limit:?}")
}

fn main() {}
