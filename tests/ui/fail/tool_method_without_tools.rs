use modelctx::prelude::*;

struct Shop;

impl Shop {
    /// Search books.
    #[tool]
    async fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
