use modelctx::prelude::*;

/// The about page.
#[resource]
async fn about() -> String {
    "A shop.".into()
}

fn main() {}
