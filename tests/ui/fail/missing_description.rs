use modelctx::prelude::*;

#[tool]
async fn search(query: String) -> String {
    query
}

fn main() {}
