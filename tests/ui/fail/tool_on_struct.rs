use modelctx::prelude::*;

#[tool]
struct Search {
    query: String,
}

fn main() {}
