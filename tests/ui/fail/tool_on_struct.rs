use mcp::prelude::*;

#[tool]
struct Search {
    query: String,
}

fn main() {}
