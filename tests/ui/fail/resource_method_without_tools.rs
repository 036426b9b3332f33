use modelctx::prelude::*;

struct Shop;

impl Shop {
    /// The catalog.
    #[resource("books://catalog")]
    async fn catalog(&self) -> String {
        String::new()
    }
}

fn main() {}
