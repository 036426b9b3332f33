use modelctx::prelude::*;

/// A scope list that is a string.
#[tool(scopes = "books:write")]
async fn not_a_list() -> String {
    String::new()
}

/// A scope with a space, and one that is not a string.
#[tool(scopes = ["books:read books:write", 7])]
async fn bad_entries() -> String {
    String::new()
}

/// An empty scope on a prompt.
#[prompt(scopes = [""])]
async fn empty_scope() -> String {
    String::new()
}

fn main() {}
