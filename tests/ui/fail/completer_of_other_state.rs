use modelctx::prelude::*;
use modelctx::server::{CompletionRequest, State};

struct Shop;
struct Library;

async fn shelves(req: CompletionRequest<Library>) -> Vec<String> {
    vec![req.value]
}

/// Find a shelf.
#[prompt]
async fn find(shop: State<Shop>, #[arg(complete = shelves)] shelf: String) -> String {
    let _ = shop;
    shelf
}

fn main() {}
