//! `crate = "path"` points the generated code at the runtime through a re-export, on every
//! attribute (a free tool, resource and prompt, and a `#[tools]` block).
mod sdk {
    pub use ::modelctx as rt;
}

use modelctx::prelude::*;

/// Add two numbers.
#[tool(crate = "crate::sdk::rt", read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The logo.
#[resource("shop://logo", crate = "crate::sdk::rt")]
async fn logo() -> String {
    "logo".to_owned()
}

/// Greet.
#[prompt(crate = "crate::sdk::rt")]
async fn greet(name: String) -> String {
    format!("Hello {name}")
}

struct Shop;

#[tools(crate = "crate::sdk::rt")]
impl Shop {
    /// Count.
    #[tool]
    async fn count(&self) -> usize {
        0
    }
}

fn main() {
    let _server = McpServer::new("shop")
        .tool(AddTool)
        .resource(LogoResource)
        .prompt(GreetPrompt)
        .tools(Shop);
}
