use modelctx::prelude::*;

/// Look a book up by its year.
#[tool]
async fn by_year(#[arg(pattern = "^[0-9]{4}$")] year: i32) -> String {
    year.to_string()
}

fn main() {}
