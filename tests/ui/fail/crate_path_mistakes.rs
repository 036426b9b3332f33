//! `crate = ".."` must be a path (the error is on the string), is used as written (a path
//! that leads nowhere fails where it is written), and goes on #[tools] in an impl block.
use modelctx::prelude::*;

/// Add.
#[tool(crate = "not a path")]
async fn add(a: i64) -> i64 {
    a
}

/// Double.
#[tool(crate = "nowhere")]
async fn double(a: i64) -> i64 {
    a * 2
}

struct Shop;

#[tools]
impl Shop {
    /// Count.
    #[tool(crate = "crate::sdk")]
    async fn count(&self) -> usize {
        0
    }
}

fn main() {}
