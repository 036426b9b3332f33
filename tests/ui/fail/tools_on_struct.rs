use modelctx::prelude::*;

#[tools]
struct Shop;

fn main() {}
