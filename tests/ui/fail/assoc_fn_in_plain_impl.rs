use modelctx::prelude::*;

struct Shop;

impl Shop {
    /// Search books.
    #[tool]
    async fn search(query: String) -> String {
        query
    }
}

fn main() {}
