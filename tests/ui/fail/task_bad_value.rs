use modelctx::prelude::*;

/// A task support that is not one of the three.
#[tool(task = "sometimes")]
async fn maybe_a_task() -> String {
    String::new()
}

fn main() {}
