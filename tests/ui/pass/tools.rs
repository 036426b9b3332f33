use modelctx::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Book {
    title: String,
}

/// Search books.
#[tool(read_only, title = "Search", icon = "https://example.com/i.png", meta = r#"{"vendor/x": 1}"#)]
async fn search(
    ctx: RequestContext,
    /// Words.
    #[arg(length(1..=100), pattern = "^[a-z ]+$")]
    query: String,
    /// How many.
    #[arg(range(1..=50), default = 10)]
    limit: u32,
    tags: Option<Vec<String>>,
) -> Result<Vec<Book>, ToolError> {
    let _ = (ctx, tags, limit);
    Ok(vec![Book { title: query }])
}

/// Count words, off the executor.
#[tool]
fn words(text: String) -> usize {
    text.split_whitespace().count()
}

struct Shop {
    name: String,
}

#[tools]
impl Shop {
    /// The shop's name.
    #[tool]
    async fn name(&self) -> String {
        self.name.clone()
    }

    /// A constant.
    #[tool(name = "answer")]
    fn answer() -> modelctx::Result<i64> {
        Ok(42)
    }
}

fn main() {
    let _server = McpServer::new("s")
        .tool(SearchTool)
        .tool(WordsTool)
        .tools(Shop { name: "x".into() });
}
