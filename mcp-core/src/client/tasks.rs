//! The client side of the 2026 tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`):
//! task-augmented `tools/call`, `tasks/get`, `tasks/update`, `tasks/cancel`, and a loop that
//! awaits a task's end, answering its input requests on the way.
//!
//! The client declares the extension only on the requests of this API: each carries
//! `extensions["io.modelcontextprotocol/tasks"]` in its `_meta` client capabilities (added to
//! the capabilities the builder declares), so [`Client::call_tool`] and every other request
//! stay plain calls. A 2025 connection has no extension: there
//! [`call_tool_as_task`](Client::call_tool_as_task) is a plain `tools/call`.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{Client, RequestOptions};
use crate::era::{Era, META_CLIENT_CAPABILITIES};
use crate::error::ErrorObject;
use crate::error::McpError;
use crate::types::{CallToolResult, Task, TaskStatus, TASKS_EXTENSION};

/// How often [`Client::await_task`] polls when the server suggests no `pollIntervalMs`:
/// 500 ms.
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The fastest [`Client::await_task`] polls, whatever the server suggests: 10 ms.
const MIN_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// How a task-augmented `tools/call` was answered: at once with the result (the tool does not
/// run as a task, or the connection is 2025), or with the task now running on the server.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use modelctx_core::client::{Client, ToolCallOutcome};
/// use modelctx_core::server::{McpServer, TaskSupport, ToolDef};
/// use modelctx_core::types::CallToolResult;
/// use serde_json::json;
///
/// let render = ToolDef::<()>::from_schema("render", json!({"type": "object"}), |_, _| async {
///     Ok(CallToolResult::text("rendered"))
/// })
/// .unwrap()
/// .task_support(TaskSupport::Optional);
/// let client = Client::connect(McpServer::new("studio").tool(render)).await.unwrap();
/// let result = match client.call_tool_as_task("render", json!({})).await.unwrap() {
///     ToolCallOutcome::Task(task) => client.await_task(&task.task_id).await.unwrap(),
///     ToolCallOutcome::Done(result) => result,
/// };
/// assert_eq!(result.content[0].as_text(), Some("rendered"));
/// client.close().await;
/// # });
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCallOutcome {
    /// The server answered with the result: the tool does not run as a task.
    Done(CallToolResult),
    /// The server created a task (`resultType: "task"`); follow it with
    /// [`Client::await_task`] or [`Client::get_task`].
    Task(Task),
}

/// What `tasks/get` says of a task: the task itself and what its status carries.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskState {
    /// Id, status, times, `ttlMs`, `pollIntervalMs`.
    #[serde(flatten)]
    pub task: Task,
    /// The tool's result once `completed` (a tool error is a result with `is_error`).
    #[serde(default)]
    pub result: Option<CallToolResult>,
    /// The JSON-RPC error once `failed` (see [`error`](Self::error)).
    #[serde(default)]
    pub error: Option<ErrorObject>,
    /// While `input_required`: the questions, by key, as `{method, params}` objects; answer
    /// them with [`Client::update_task`].
    #[serde(default)]
    pub input_requests: Option<Map<String, Value>>,
}

impl TaskState {
    /// The task's status.
    pub fn status(&self) -> TaskStatus {
        self.task.status
    }

    /// The inlined error of a `failed` task, as the error a plain call would have given.
    pub fn error(&self) -> Option<McpError> {
        self.error.clone().map(McpError::from_wire)
    }
}

/// The flat `CreateTaskResult` or a plain result, told apart by `resultType`.
fn outcome(answer: Value) -> Result<ToolCallOutcome, McpError> {
    if answer.get("resultType").and_then(Value::as_str) == Some("task") {
        let task: Task = serde_json::from_value(answer)
            .map_err(|e| McpError::internal(format!("invalid CreateTaskResult: {e}")))?;
        return Ok(ToolCallOutcome::Task(task));
    }
    Ok(ToolCallOutcome::Done(serde_json::from_value(answer)?))
}

impl Client {
    /// A task-augmented `tools/call`: the request declares the tasks extension, and a tool that
    /// runs as a task (`taskSupport` `optional` or `required`) answers at once with
    /// [`ToolCallOutcome::Task`]; any other tool, and every tool on a 2025 connection, answers
    /// [`ToolCallOutcome::Done`] with its result. Questions the tool asks before it becomes a
    /// task (2026 `input_required`) are answered with the builder's callbacks, as for
    /// [`call_tool`](Self::call_tool). The result of a task is not checked against the tool's
    /// `outputSchema`.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<ToolCallOutcome, McpError> {
        let params = self.with_tasks(json!({ "name": name, "arguments": arguments }));
        let answer: Value = self
            .request_value("tools/call", params, &RequestOptions::default())
            .await?;
        outcome(answer)
    }

    /// `tasks/get`: where task `task_id` is, with its result, error or questions inlined.
    pub async fn get_task(&self, task_id: &str) -> Result<TaskState, McpError> {
        let answer = self
            .request_once(
                "tasks/get",
                self.with_tasks(json!({ "taskId": task_id })),
                &RequestOptions::default(),
            )
            .await?;
        serde_json::from_value(answer)
            .map_err(|e| McpError::internal(format!("invalid tasks/get result: {e}")))
    }

    /// `tasks/update`: answers to questions of a task parked in `input_required`, by the keys
    /// of its `inputRequests` (each answer the result the request's method returns, e.g. an
    /// [`ElicitResult`](crate::types::ElicitResult) as JSON). Once every question is
    /// answered the task works again.
    pub async fn update_task(
        &self,
        task_id: &str,
        responses: Map<String, Value>,
    ) -> Result<(), McpError> {
        let params = json!({ "taskId": task_id, "inputResponses": responses });
        self.request_once(
            "tasks/update",
            self.with_tasks(params),
            &RequestOptions::default(),
        )
        .await
        .map(drop)
    }

    /// `tasks/cancel`: the task ends `cancelled` (a task already ended stays as it was).
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), McpError> {
        let params = self.with_tasks(json!({ "taskId": task_id }));
        self.request_once("tasks/cancel", params, &RequestOptions::default())
            .await
            .map(drop)
    }

    /// Follows task `task_id` to its end with `tasks/get`, every `pollIntervalMs` the server
    /// suggests ([`DEFAULT_TASK_POLL_INTERVAL`], 500 ms, when it suggests none; never faster
    /// than 10 ms). A task parked in `input_required` has its questions answered with the
    /// builder's callbacks ([`on_elicit`](super::ClientBuilder::on_elicit),
    /// [`on_sample`](super::ClientBuilder::on_sample),
    /// [`on_list_roots`](super::ClientBuilder::on_list_roots)) through `tasks/update`, at most
    /// [`max_input_rounds`](super::ClientBuilder::max_input_rounds) times.
    ///
    /// Returns the result of a `completed` task (a tool error is `Ok` with `is_error`), the
    /// inlined error of a `failed` one, and an error with code `-32800` ("request cancelled")
    /// for a `cancelled` one. There is no overall timeout: wrap it in `tokio::time::timeout`
    /// and [`cancel_task`](Self::cancel_task) if the caller gives up.
    pub async fn await_task(&self, task_id: &str) -> Result<CallToolResult, McpError> {
        let mut rounds = 0;
        loop {
            let state = self.get_task(task_id).await?;
            match state.task.status {
                TaskStatus::Completed => {
                    return state.result.ok_or_else(|| {
                        McpError::internal(format!("task {task_id} completed without a result"))
                    })
                }
                TaskStatus::Failed => {
                    return Err(state.error().unwrap_or_else(|| {
                        McpError::internal(format!("task {task_id} failed without an error"))
                    }))
                }
                TaskStatus::Cancelled => {
                    return Err(McpError::new(
                        REQUEST_CANCELLED,
                        format!("task {task_id} was cancelled"),
                    ))
                }
                TaskStatus::InputRequired => {
                    rounds += 1;
                    if rounds > self.config.max_input_rounds {
                        return Err(McpError::internal(format!(
                            "task {task_id}: the server still asked for input after {} rounds",
                            self.config.max_input_rounds
                        )));
                    }
                    let requests = state.input_requests.unwrap_or_default();
                    let responses = self.shared.input.answer_all(&requests).await?;
                    self.update_task(task_id, responses).await?;
                }
                TaskStatus::Working => {
                    let every = state
                        .task
                        .poll_interval_ms
                        .map_or(DEFAULT_TASK_POLL_INTERVAL, Duration::from_millis)
                        .max(MIN_POLL_INTERVAL);
                    tokio::time::sleep(every).await;
                }
            }
        }
    }

    /// `params` with the tasks extension declared in its `_meta` client capabilities (2026;
    /// a 2025 request is left as it is).
    fn with_tasks(&self, mut params: Value) -> Value {
        if self.era() != Era::Modern {
            return params;
        }
        let mut capabilities = self.envelope.0.clone();
        if let Value::Object(caps) = &mut capabilities {
            let extensions = caps
                .entry("extensions")
                .or_insert_with(|| Value::Object(Map::new()));
            if !extensions.is_object() {
                *extensions = Value::Object(Map::new());
            }
            if let Value::Object(extensions) = extensions {
                extensions
                    .entry(TASKS_EXTENSION)
                    .or_insert_with(|| Value::Object(Map::new()));
            }
        }
        if let Value::Object(map) = &mut params {
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(META_CLIENT_CAPABILITIES.into(), capabilities);
            }
        }
        params
    }
}

/// The JSON-RPC code of a cancelled request (`-32800`), given to the awaiter of a cancelled
/// task.
const REQUEST_CANCELLED: i32 = -32800;
