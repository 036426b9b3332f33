use modelctx::prelude::*;

/// Search books.
#[tool]
async fn search(query: String, #[arg(default = 5, default = 10)] limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {}
