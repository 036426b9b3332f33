use modelctx::prelude::*;

type Answer = Result<String, ToolError>;

/// Search books.
#[tool]
async fn search(query: String) -> Answer {
    Ok(query)
}

fn main() {}
