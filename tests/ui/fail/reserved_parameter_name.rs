use modelctx::prelude::*;

/// Echo the arguments.
#[tool]
async fn echo(__args: String) -> String {
    __args
}

fn main() {}
