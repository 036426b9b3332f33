//! What a tool and a request say about the tasks extension: a tool's [`TaskSupport`], and
//! whether a request declared `io.modelcontextprotocol/tasks`.

use serde_json::json;

use crate::error::{codes, McpError};
use crate::lowlevel::RequestContext;

pub use crate::types::TASKS_EXTENSION;

/// Whether a tool runs as a task of the 2026 tasks extension (SEP-2663,
/// `io.modelcontextprotocol/tasks`).
///
/// A tool opts in with [`ToolDef::task_support`](crate::server::ToolDef::task_support) (or
/// `#[tool(task = "optional")]`). When a 2026 `tools/call` declares the extension (in its
/// `_meta` client capabilities) and calls such a tool, the server answers at once with a flat
/// `CreateTaskResult` (`resultType: "task"`, `taskId`, `status`, `createdAt`, `lastUpdatedAt`,
/// `ttlMs`, `pollIntervalMs`) and runs the tool in the background. The client then uses:
///
/// - `tasks/get {taskId}`: the task, with `result` inlined once `completed` (a tool error is
///   `completed` with `result.isError: true`), `error` once `failed` (a protocol error or a
///   crash), `inputRequests` while `input_required`;
/// - `tasks/update {taskId, inputResponses}`: answers to a parked task's questions (asked with
///   [`RequestContext::elicit`](crate::lowlevel::RequestContext::elicit) and friends, exactly as
///   in a multi-round-trip call); once every question is answered the tool runs again from the
///   top with all the answers;
/// - `tasks/cancel {taskId}`: the task ends `cancelled` (a run on the replica that served the
///   cancel is dropped; a run on another replica goes on to its end, and its outcome is
///   discarded).
///
/// `tasks/update` and `tasks/cancel` answer `{resultType: "complete"}`; an unknown or expired
/// task is `-32602`; a tasks method from a client that did not declare the extension is
/// `-32021`; `tasks/result` and `tasks/list` do not exist (`-32601`). A tool whose task support
/// is `required`, called without the extension, is refused with `-32021` and
/// `data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"]`. 2025 sessions run
/// every tool synchronously. Clients poll every `pollIntervalMs` (500 ms), or listen: a
/// `subscriptions/listen` whose filter lists `taskIds` hears `notifications/tasks`
/// (`{taskId, status}`) at every change of those tasks, through the server's event bus (so
/// from every replica, with a shared bus).
///
/// Tasks live `ttlMs` (one hour; [`McpServer::task_ttl`](crate::server::McpServer::task_ttl)) in the
/// server's [`TaskStore`](super::TaskStore) (see [`McpServer::task_store`](crate::server::McpServer::task_store)). A tool that should ask its
/// questions in the request and only then become a task uses
/// [`ToolDef::input_before_task`](crate::server::ToolDef::input_before_task).
///
/// ```
/// use modelctx_core::server::{TaskSupport, ToolDef};
/// use modelctx_core::types::CallToolResult;
/// use serde_json::json;
///
/// let tool = ToolDef::<()>::from_schema("render", json!({"type": "object"}), |_ctx, _args| async {
///     Ok(CallToolResult::text("done"))
/// })
/// .unwrap()
/// .task_support(TaskSupport::Optional);
/// assert_eq!(tool.definition().execution.as_ref().unwrap()["taskSupport"], "optional");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never a task: the call is answered with its result (the default).
    #[default]
    Forbidden,
    /// A task when the client declared the extension, a plain call otherwise.
    Optional,
    /// Only as a task: a client without the extension gets `-32021`.
    Required,
}

impl TaskSupport {
    /// The wire value (`execution.taskSupport`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// `-32021` unless the request declared the tasks extension.
pub(crate) fn require_extension<S: Send + Sync + 'static>(
    ctx: &RequestContext<S>,
) -> Result<(), McpError> {
    match declared(ctx) {
        true => Ok(()),
        false => Err(missing_extension(
            "taskIds in a subscriptions/listen filter",
        )),
    }
}

/// True when the request declared the tasks extension.
pub(super) fn declared<S: Send + Sync + 'static>(ctx: &RequestContext<S>) -> bool {
    ctx.client_capabilities()
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

pub(super) fn missing_extension(what: &str) -> McpError {
    McpError::new(
        codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: extensions.{TASKS_EXTENSION} ({what})"),
    )
    .with_data(json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}))
}
