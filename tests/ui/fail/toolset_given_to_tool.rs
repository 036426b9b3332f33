use modelctx::prelude::*;

struct Shop;

#[tools]
impl Shop {
    /// Search books.
    #[tool]
    async fn search(&self, query: String) -> String {
        query
    }
}

fn main() {
    let _server = McpServer::new("shop").tool(Shop);
}
