use modelctx::prelude::*;

fn pages(count: u32) -> Vec<String> {
    (1..=count).map(|n| n.to_string()).collect()
}

/// Summarise a chapter.
#[prompt]
async fn summarise(#[arg(complete = pages)] chapter: String) -> String {
    chapter
}

fn main() {}
