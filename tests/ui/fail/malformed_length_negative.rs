use modelctx::prelude::*;

/// Name a thing.
#[tool]
async fn name(#[arg(length(-1..=10))] label: String) -> String {
    label
}

fn main() {}
