use modelctx::prelude::*;

/// One book.
#[resource("books://{id}")]
async fn book(id: String, format: String) -> String {
    format!("{id} {format}")
}

fn main() {}
