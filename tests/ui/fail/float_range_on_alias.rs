use modelctx::prelude::*;

type Stars = u8;

/// Rate a book.
#[tool]
async fn rate(#[arg(range(0.5..=5.0))] stars: Stars) -> String {
    stars.to_string()
}

fn main() {}
