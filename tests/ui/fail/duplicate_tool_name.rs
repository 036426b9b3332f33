use modelctx::prelude::*;

struct Shop;

#[tools]
impl Shop {
    /// Search books.
    #[tool]
    async fn search(&self, query: String) -> String {
        query
    }

    /// Search magazines.
    #[tool(name = "search")]
    async fn search_magazines(&self, query: String) -> String {
        query
    }
}

fn main() {}
