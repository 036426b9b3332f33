use modelctx::prelude::*;

/// Rate a book.
#[tool]
async fn rate(#[arg(range(0.5..=5.0))] stars: u8) -> String {
    stars.to_string()
}

fn main() {}
