use modelctx::prelude::*;

/// Log twice.
#[tool]
async fn twice(first: RequestContext, second: RequestContext) -> String {
    let _ = (first, second);
    String::new()
}

fn main() {}
