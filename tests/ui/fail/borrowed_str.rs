use modelctx::prelude::*;

/// Shout the text.
#[tool]
async fn shout(text: &str) -> String {
    text.to_uppercase()
}

fn main() {}
