use modelctx::prelude::*;

const MAX: u32 = 50;

/// Search books.
#[tool]
async fn search(query: String, #[arg(range(1..=MAX))] limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {}
