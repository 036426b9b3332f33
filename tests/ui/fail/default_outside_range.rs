use modelctx::prelude::*;

/// List books, a page at a time.
#[tool]
async fn list(#[arg(range(1..=100), default = 0)] per_page: u32) -> String {
    per_page.to_string()
}

fn main() {}
