use modelctx::prelude::*;

/// The page count.
#[resource("shop://pages")]
async fn pages() -> u64 {
    3
}

fn main() {}
