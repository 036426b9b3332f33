use modelctx::prelude::*;

/// Look a book up by title.
#[tool]
async fn find(#[arg(range(1..=80))] title: String) -> String {
    title
}

fn main() {}
