use modelctx::prelude::*;

#[derive(serde::Deserialize)]
struct Filter {
    tag: String,
}

/// Search with an optional filter.
#[tool]
async fn search(query: String, filter: Option<Filter>) -> String {
    format!("{query} {}", filter.map(|f| f.tag).unwrap_or_default())
}

fn main() {}
