use modelctx::prelude::*;

/// Print anything.
#[tool]
async fn show(value: impl std::fmt::Display) -> String {
    value.to_string()
}

fn main() {}
