use modelctx::prelude::*;

struct Oops;

/// Search books.
#[tool]
async fn search(query: String) -> Result<String, Oops> {
    if query.is_empty() {
        return Err(Oops);
    }
    Ok(query)
}

fn main() {}
