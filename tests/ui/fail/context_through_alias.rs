use modelctx::prelude::*;

struct Shop;
type Ctx = RequestContext<Shop>;

/// Search books.
#[tool]
async fn search(ctx: Ctx, query: String) -> String {
    let _ = ctx;
    query
}

fn main() {}
