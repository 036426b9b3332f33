use modelctx::prelude::*;

struct Shop;

#[tools]
impl Shop {
    fn helper(&self) -> u32 {
        1
    }
}

fn main() {}
