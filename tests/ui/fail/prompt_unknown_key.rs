use modelctx::prelude::*;

/// Summarize.
#[prompt(descripton = "Summarize a text.")]
async fn summarize(text: String) -> String {
    text
}

fn main() {}
