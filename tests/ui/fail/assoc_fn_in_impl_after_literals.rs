use modelctx::prelude::*;

struct Shop;

impl Default for Shop {
    fn default() -> Self {
        Shop
    }
}

impl Shop {
    /// A braced string "}" and a char '}' before the function do not confuse the macro.
    const BRACE: char = '}';
}

impl Shop {
    /// Search books.
    #[tool]
    fn search(#[arg(length(1..))] query: String) -> String {
        query
    }
}

fn main() {}
