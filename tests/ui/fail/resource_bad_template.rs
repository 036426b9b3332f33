use modelctx::prelude::*;

/// One book.
#[resource("books://{id")]
async fn book(id: String) -> String {
    id
}

fn main() {}
