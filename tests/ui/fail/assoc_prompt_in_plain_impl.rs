use modelctx::prelude::*;

struct Shop;

impl Shop {
    /// Recommend a book.
    #[prompt]
    async fn recommend(#[arg(description = "A genre.")] genre: String) -> String {
        format!("Recommend a {genre} book.")
    }
}

fn main() {}
