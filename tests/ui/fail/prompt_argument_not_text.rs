use modelctx::prelude::*;

/// Summarize in so many words.
#[prompt]
async fn summarize(text: String, words: u32) -> String {
    format!("Summarize in {words} words: {text}")
}

fn main() {}
