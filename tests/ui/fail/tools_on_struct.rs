use mcp::prelude::*;

#[tools]
struct Shop;

fn main() {}
