use modelctx::prelude::*;

/// Echo anything.
#[tool]
async fn echo<T: serde::de::DeserializeOwned>(value: T) -> String {
    let _ = value;
    String::new()
}

fn main() {}
