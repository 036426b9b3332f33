use modelctx::prelude::*;

/// List books, a page at a time.
#[tool]
async fn list(#[arg(length(1..=100))] per_page: u32) -> String {
    per_page.to_string()
}

fn main() {}
