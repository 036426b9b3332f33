use modelctx::prelude::*;

/// The logo.
#[resource("shop://logo", icons = "https://example.com/logo.png")]
async fn logo() -> String {
    String::new()
}

/// One book.
#[resource("books://{id}", meta = r#"{"vendor/key": 1"#)]
async fn book(id: u32) -> String {
    id.to_string()
}

/// Summarize.
#[prompt(icon = "https://example.com/s.png", meta = r#"["not", "an", "object"]"#)]
async fn summarize(text: String) -> String {
    text
}

fn main() {}
