use modelctx::prelude::*;

/// Greet someone.
#[tool]
async fn greet(#[arg(length(1..=8), default = "my dear friend")] name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
