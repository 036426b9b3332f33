use modelctx::prelude::*;

/// Look a book up by ISBN.
#[tool]
async fn by_isbn(#[arg(pattern = "^[0-9X{10}$")] isbn: String) -> String {
    isbn
}

fn main() {}
