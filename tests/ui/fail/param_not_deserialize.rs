use modelctx::prelude::*;

struct Point {
    x: f64,
}

/// Move to a point.
#[tool]
async fn goto(at: Point) -> String {
    format!("{}", at.x)
}

fn main() {}
