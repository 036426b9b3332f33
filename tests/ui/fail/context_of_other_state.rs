use modelctx::prelude::*;

struct Shop;
struct Library;

/// Search books.
#[tool]
async fn search(ctx: RequestContext<Shop>, query: String) -> String {
    let _ = ctx;
    query
}

fn main() {
    let _server = McpServer::with_state("shop", Library).tool(SearchTool);
}
