use modelctx::prelude::*;

struct Report {
    lines: usize,
}

/// Produce a report.
#[tool]
async fn report() -> Report {
    Report { lines: 3 }
}

fn main() {}
