use modelctx::prelude::*;

/// One chapter of a book.
#[resource("books://{id}/chapters/{chapter}")]
async fn chapter(id: String) -> String {
    id
}

fn main() {}
