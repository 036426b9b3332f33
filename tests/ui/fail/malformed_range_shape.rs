use modelctx::prelude::*;

/// Search books.
#[tool]
async fn search(query: String, #[arg(range(50))] limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {}
