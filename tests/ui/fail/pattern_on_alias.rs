use modelctx::prelude::*;

type Year = u16;

/// Look a book up by its year.
#[tool]
async fn by_year(#[arg(pattern = "^[0-9]{4}$")] year: Year) -> String {
    year.to_string()
}

fn main() {}
