//! A type of your own that is text or a number on the wire takes `pattern`, `length` and
//! `range` once it opts in with the marker traits.
use modelctx::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
struct Isbn(String);

impl modelctx::server::checks::TextArgument for Isbn {}
impl modelctx::server::checks::TextOrListArgument for Isbn {}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
struct Cents(u64);

impl modelctx::server::checks::NumberArgument for Cents {}

/// Looks a book up.
#[tool]
async fn lookup(
    #[arg(pattern = "^[0-9-]{10,17}$", length(10..=17))] isbn: Isbn,
    #[arg(range(0..=100_000))] budget: Option<Cents>,
) -> String {
    let _ = budget.map(|c| c.0);
    isbn.0
}

/// A list of books (`length` counts items).
#[tool]
async fn many(#[arg(length(1..=3))] isbns: Box<Vec<String>>) -> usize {
    isbns.len()
}

fn main() {
    let server = McpServer::new("books").tool(LookupTool).tool(ManyTool);
    assert_eq!(server.tool_names(), ["lookup", "many"]);
}
