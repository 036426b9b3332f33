//! `crate = ".."` must be a string holding a path (the error is on the value), is given once,
//! is used as written (a path that leads nowhere fails where it is written), and goes on
//! #[tools] in an impl block.
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

/// The logo.
#[resource("shop://logo", crate = modelctx)]
async fn logo() -> String {
    String::new()
}

/// Greet.
#[prompt(crate = "::modelctx", crate = "::modelctx")]
async fn greet(name: String) -> String {
    name
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
