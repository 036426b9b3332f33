//! The task-supporting tools the tasks tests share (`tests/tasks.rs`, `tests/tasks_client.rs`),
//! included by path where needed so other test binaries do not compile them.
#![allow(dead_code)]

use std::time::Duration;

use modelctx::input::Elicited;
use modelctx::prelude::*;
use modelctx::server::{IntoTool, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Name {
    pub name: String,
}

/// Works for `ms` milliseconds.
#[tool(task = "optional")]
pub async fn work(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("worked {ms} ms")
}

/// Fails as a tool; only as a task.
#[tool(task = "required")]
pub async fn broken() -> Result<String, ToolError> {
    Err(ToolError::new("disk full"))
}

/// Fails at the protocol level (after 30 ms, so a client sees it working first).
#[tool(task = "optional")]
pub async fn crashing() -> modelctx::Result<String> {
    tokio::time::sleep(Duration::from_millis(30)).await;
    Err(McpError::invalid_params("bad job"))
}

/// Never a task.
#[tool(task = "forbidden")]
pub async fn quick() -> String {
    "quick".into()
}

/// Parks for a name, then greets.
#[tool(task = "optional")]
pub async fn greet_asked(ctx: RequestContext) -> modelctx::Result<String> {
    let name = match ctx.elicit::<Name>("who", "Your name?").await? {
        Elicited::Accepted(form) => form.name,
        _ => "nobody".into(),
    };
    Ok(format!("Hello, {name}!"))
}

/// Asks two names at once.
#[tool(task = "optional")]
pub async fn two_names(ctx: RequestContext) -> modelctx::Result<String> {
    let answers = ctx
        .ask(
            Questions::new()
                .elicit::<Name>("first", "First name?")
                .elicit::<Name>("second", "Second name?"),
        )
        .await?;
    let name = |key: &str| -> modelctx::Result<String> {
        Ok(answers
            .elicited::<Name>(key)?
            .accepted()
            .map_or("?".into(), |f| f.name))
    };
    Ok(format!("{} and {}", name("first")?, name("second")?))
}

/// Asks a name in the request, then works in a task.
#[tool(task = "optional")]
pub async fn ask_then_work(ctx: RequestContext) -> modelctx::Result<String> {
    let name = match ctx.elicit::<Name>("who", "Who?").await? {
        Elicited::Accepted(form) => form.name,
        _ => "nobody".into(),
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(format!("done for {name}"))
}

/// A server named `name` with every tool above (`ask_then_work` asking before its task).
pub fn server(name: &str) -> McpServer {
    McpServer::new(name)
        .tool(WorkTool)
        .tool(BrokenTool)
        .tool(CrashingTool)
        .tool(QuickTool)
        .tool(GreetAskedTool)
        .tool(TwoNamesTool)
        .tool(AskThenWorkTool.into_tool().input_before_task())
}
