use modelctx::prelude::*;

type Title = String;

/// Look a book up by title.
#[tool]
async fn find(#[arg(range(1..=80))] title: Title) -> String {
    title
}

fn main() {}
