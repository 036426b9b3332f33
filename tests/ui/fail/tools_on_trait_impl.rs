use modelctx::prelude::*;

struct Shop;

#[tools]
impl Default for Shop {
    fn default() -> Self {
        Shop
    }
}

fn main() {}
