use modelctx::prelude::*;

trait Catalog {
    /// Search books.
    #[tool]
    async fn search(query: String) -> String {
        query
    }
}

fn main() {}
