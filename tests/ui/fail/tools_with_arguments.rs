use modelctx::prelude::*;

struct Shop;

#[tools(read_only)]
impl Shop {
    /// Search books.
    #[tool]
    async fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
