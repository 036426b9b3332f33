//! A tool that asks the user twice: first who they are, then which plan they want. The same
//! code runs on both wires: on 2025-11-25 the server sends `elicitation/create` to the client
//! and waits; on 2026-07-28 each question is an `input_required` result the client answers by
//! retrying, and the sealed `requestState` carries the first answer into the second round.
//!
//! Run: `cargo run --example signup` (stdio). Replicas that share requestState keys:
//! `MCP_REQUEST_STATE_KEYS=<key>[,<old key>] cargo run --example signup` (make a key with
//! `KeyRing::generate_key()`).

use modelctx::input::Elicited;
use modelctx::prelude::*;
use modelctx::request_state::KeyRing;

/// Who is signing up.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Person {
    /// Your name
    name: String,
    /// Where we send the receipt
    #[schemars(email)]
    email: String,
}

/// The plans on offer.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Plan {
    /// Free: one project
    Free,
    /// Pro: unlimited projects
    Pro,
}

/// The plan question.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PlanChoice {
    plan: Plan,
    /// Send me the monthly newsletter
    #[serde(default)]
    newsletter: bool,
}

/// Signs the user up, asking for their details and their plan.
#[tool]
async fn sign_up(ctx: RequestContext) -> Result<String, ToolError> {
    let person = match ctx.elicit::<Person>("person", "Who is signing up?").await? {
        Elicited::Accepted(person) => person,
        Elicited::Declined => return Err(ToolError::new("sign-up declined")),
        Elicited::Cancelled => return Err(ToolError::new("sign-up cancelled")),
    };
    let message = format!("Which plan would you like, {}?", person.name);
    let Some(choice) = ctx.elicit::<PlanChoice>("plan", &message).await?.accepted() else {
        return Err(ToolError::new("no plan chosen"));
    };
    let plan = match choice.plan {
        Plan::Free => "Free",
        Plan::Pro => "Pro",
    };
    let news = if choice.newsletter {
        ", with newsletter"
    } else {
        ""
    };
    Ok(format!(
        "Signed up {} <{}> for {plan}{news}.",
        person.name, person.email
    ))
}

pub fn server() -> modelctx::Result<McpServer> {
    let server = McpServer::new("signup").version("1.0.0").tool(SignUpTool);
    Ok(match std::env::var("MCP_REQUEST_STATE_KEYS") {
        Ok(keys) => server.seal_request_state(KeyRing::from_base64(&keys)?),
        Err(_) => server,
    })
}

#[tokio::main]
async fn main() -> modelctx::Result<()> {
    server()?.serve_stdio().await
}
