use modelctx::prelude::*;

struct Shop;

impl Shop {
    /// The catalog.
    #[resource("books://catalog")]
    async fn catalog() -> String {
        String::new()
    }
}

fn main() {}
