//! A server generic in its lifespan state: handlers read a typed `Catalog` (seed 001,
//! tutorial 005).
//!
//! Run: `cargo run --example lowlevel_lifespan` (serves over stdio).

use modelctx::prelude::*;
use modelctx::types::*;
use serde_json::json;

/// What the lifespan builds once at start.
#[derive(Debug)]
pub struct Catalog {
    books: Vec<String>,
}

impl Catalog {
    fn search(&self, query: &str) -> Vec<&str> {
        let query = query.to_lowercase();
        self.books
            .iter()
            .filter(|title| title.to_lowercase().contains(&query))
            .map(String::as_str)
            .collect()
    }
}

async fn call_tool(
    ctx: RequestContext<Catalog>,
    params: CallToolRequestParams,
) -> Result<CallToolResult> {
    let args = params.arguments.unwrap_or_default();
    let query = args
        .get("query")
        .and_then(|q| q.as_str())
        .ok_or_else(|| McpError::internal("missing argument `query`"))?;
    let matches = ctx.state().search(query);
    Ok(CallToolResult::text(format!(
        "Found {} books: {}.",
        matches.len(),
        matches.join(", ")
    )))
}

/// The server of this example.
pub fn server() -> Server<Catalog> {
    let mut server = Server::with_lifespan("Bookshop", || async {
        Ok(Catalog {
            books: vec![
                "Dune".into(),
                "Dune Messiah".into(),
                "Children of Dune".into(),
            ],
        })
    });
    server
        .on_list_tools(|_, _| async {
            let tool = Tool::new(
                "search_books",
                "Search the catalog by title or author.",
                json!({
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"]
                }),
            );
            Ok(ListToolsResult::new(vec![tool]))
        })
        .on_call_tool(call_tool)
        .on_lifespan_exit(|catalog| async move {
            eprintln!("closing the catalog of {} books", catalog.books.len());
        });
    server
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    server().serve_stdio().await
}
