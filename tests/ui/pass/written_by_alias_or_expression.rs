//! What the macros accept although it is not spelled the way they read it: descriptions from
//! `include_str!`/`concat!`, constraints on type aliases, handles of tools defined in a block or
//! a module. `main` checks what was generated.
use modelctx::prelude::*;
use modelctx::server::IntoTool;

type Title = String;
type PerPage = u32;
type Tags = Vec<String>;

#[doc = include_str!("written_by_alias_or_expression.md")]
#[tool]
async fn search(
    #[arg(length(1..=80), pattern = "^[A-Za-z ]+$")] title: Title,
    #[arg(range(1..=50), default = 10)] per_page: PerPage,
    #[arg(length(..=5))] tags: Option<Tags>,
) -> String {
    format!("{title} {per_page} {tags:?}")
}

/// Count
#[doc = concat!("books ", "on the shelf.")]
#[tool]
fn count() -> usize {
    0
}

mod shelf {
    use modelctx::prelude::*;

    /// Shelve a book.
    #[tool]
    pub(super) async fn shelve(title: String) -> String {
        title
    }
}

fn main() {
    /// Ping.
    #[tool]
    async fn ping() -> String {
        "pong".into()
    }

    let search = IntoTool::<()>::into_tool(SearchTool);
    let tool = search.definition();
    assert_eq!(
        tool.description.as_deref(),
        Some("Search the catalog by title.\n\nReturns the matching titles, one per line.\n")
    );
    let props = &tool.input_schema["properties"];
    assert_eq!(props["title"]["maxLength"], 80);
    assert_eq!(props["title"]["pattern"], "^[A-Za-z ]+$");
    assert_eq!(props["per_page"]["maximum"], 50);
    assert_eq!(props["tags"]["maxItems"], 5);

    let count = IntoTool::<()>::into_tool(CountTool);
    assert_eq!(
        count.definition().description.as_deref(),
        Some("Count\nbooks on the shelf.")
    );

    // The program's own `ShoutTool` is the one in scope; `shout` is registered through its
    // module.
    assert_eq!(ShoutTool(1).0, 1);
    let _server = McpServer::new("shop")
        .tool(shout_tool::ShoutTool)
        .tool(shelf::ShelveTool)
        .tool(PingTool)
        .tool(SearchTool);
}

/// Shout.
#[tool]
fn shout(text: String) -> String {
    text.to_uppercase()
}

/// A type of the program's own, named like the handle of `shout`: it hides the handle, and
/// compiles as long as it is not registered as a tool.
struct ShoutTool(u8);
