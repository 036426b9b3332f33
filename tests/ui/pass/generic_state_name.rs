//! A stateless tool, resource and prompt register on a server of any state; the generated
//! registration is generic over it, under a name that does not hide the program's own types
//! (here a type named `S`).
use modelctx::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct S {
    text: String,
}

/// Echo.
#[tool]
async fn echo(s: S) -> String {
    s.text
}

fn names(typed: &str) -> Vec<String> {
    vec![typed.to_owned()]
}

/// Greet.
#[prompt]
async fn greet(#[arg(complete = names)] name: String) -> String {
    let _: Option<S> = None;
    format!("Hello {name}")
}

struct Shop;

fn main() {
    let _ = McpServer::with_state("shop", Shop)
        .tool(EchoTool)
        .prompt(GreetPrompt);
    let _ = McpServer::new("plain").tool(EchoTool).prompt(GreetPrompt);
}
