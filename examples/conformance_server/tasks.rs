//! Fixtures of the tasks extension scenarios (`tasks-*`, SEP-2663): a sync tool, and tools
//! that run as tasks (`#[tool(task = ..)]`), finish, fail, or park for input.

use std::time::Duration;

use modelctx::prelude::*;
use modelctx::server::{IntoTool, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct DeleteConfirmation {
    /// Delete the file?
    confirm: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Detail {
    /// A name.
    name: Option<String>,
    /// Go ahead?
    confirm: Option<bool>,
}

/// Greets `name` at once (never a task).
#[tool]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Works for `seconds` seconds (0: at once), then reports `label`.
#[tool(task = "optional")]
async fn slow_compute(seconds: f64, label: Option<String>) -> String {
    tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 600.0))).await;
    format!(
        "Computed {} after {seconds}s",
        label.as_deref().unwrap_or("result")
    )
}

/// Fails (as a tool error the model reads) after a second; only runs as a task.
#[tool(task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("The job failed: the input data is corrupt"))
}

/// Breaks with a protocol-level error: its task ends `failed`.
#[tool(task = "optional")]
async fn protocol_error_job() -> modelctx::Result<String> {
    Err(McpError::internal("the job's worker crashed"))
}

/// Asks for a confirmation before deleting `filename`.
#[tool(task = "optional")]
async fn confirm_delete(ctx: RequestContext, filename: String) -> modelctx::Result<String> {
    let answer = ctx
        .elicit::<DeleteConfirmation>("confirm", &format!("Delete {filename}?"))
        .await?;
    Ok(match answer.accepted() {
        Some(form) if form.confirm => format!("Deleted {filename}"),
        _ => format!("Kept {filename}"),
    })
}

/// Asks two questions at once.
#[tool(task = "optional")]
async fn multi_input(ctx: RequestContext) -> modelctx::Result<String> {
    let answers = ctx
        .ask(
            Questions::new()
                .elicit::<Detail>("first", "First detail?")
                .elicit::<Detail>("second", "Second detail?"),
        )
        .await?;
    let name = |key: &str| -> modelctx::Result<String> {
        Ok(match answers.elicited::<Detail>(key)? {
            Elicited::Accepted(d) => match d.confirm {
                Some(true) => format!("{} (confirmed)", d.name.unwrap_or_default()),
                _ => d.name.unwrap_or_default(),
            },
            _ => "-".into(),
        })
    };
    Ok(format!("Got {} and {}", name("first")?, name("second")?))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// Your name.
    name: String,
}

/// Asks a name (multi-round-trip, in the request), then greets in a task.
#[tool(task = "optional")]
async fn test_tool_with_task(ctx: RequestContext) -> modelctx::Result<String> {
    let name = match ctx
        .elicit::<Name>("user_name", "What is your name?")
        .await?
    {
        Elicited::Accepted(form) => form.name,
        _ => "stranger".into(),
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(format!("Hello, {name}! Your task is done."))
}

/// Registers the tasks fixtures.
pub(crate) fn register(server: McpServer) -> McpServer {
    server
        .tool(GreetTool)
        .tool(SlowComputeTool)
        .tool(FailingJobTool)
        .tool(ProtocolErrorJobTool)
        .tool(ConfirmDeleteTool)
        .tool(MultiInputTool)
        .tool(TestToolWithTaskTool.into_tool().input_before_task())
}
