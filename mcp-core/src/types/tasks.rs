//! Tasks: 2025-11-25 experimental core tasks, and the 2026 `io.modelcontextprotocol/tasks`
//! extension's shapes (`ttlMs`/`pollIntervalMs`, `resultType: "task"`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Meta;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client.
    InputRequired,
    /// Finished with a result.
    Completed,
    /// Finished with an error.
    Failed,
    /// Cancelled.
    Cancelled,
}

/// A task (2025-11-25 field names; the 2026 extension renames `ttl`/`pollInterval` to
/// `ttlMs`/`pollIntervalMs`, both kept here as optional).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// Id.
    pub task_id: String,
    /// Status.
    pub status: TaskStatus,
    /// Human-readable status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last change.
    pub last_updated_at: String,
    /// 2025: retention in ms (`null` for unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Value>,
    /// 2026 extension: retention in ms (`null` for unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<Value>,
    /// 2025: suggested polling interval in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// 2026 extension: suggested polling interval in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

/// `task` param of a task-augmented request (2025).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskMetadata {
    /// Requested retention in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// The result of a task-augmented request: the task instead of the result (2025).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// The created task.
    pub task: Task,
    /// `_meta` of this task-creation result (2025): protocol or vendor metadata;
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tasks/get`, `tasks/result`, `tasks/cancel` (and the 2026 `tasks/update`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskRequestParams {
    /// The task.
    pub task_id: String,
    /// 2026 `tasks/update`: answers to the task's input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<serde_json::Map<String, Value>>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of `tasks/list` (2025).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListTasksResult {
    /// The tasks of this page.
    pub tasks: Vec<Task>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// `_meta` of this `tasks/list` result (2025): protocol or vendor metadata;
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The tasks extension's id (SEP-2663), as declared under `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

impl CreateTaskResult {
    /// The answer to a task-augmented request: the task that was created.
    pub fn new(task: Task) -> Self {
        Self { task, meta: None }
    }
}

page_result!(ListTasksResult, tasks, Task, "tasks");
