//! Where tasks live: the [`TaskStore`] trait and its in-memory default, [`MemoryTaskStore`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::McpError;
use crate::lowlevel::BoxFuture;
use crate::types::{JsonObject, TaskStatus};

/// Everything a server knows about one task, as a [`TaskStore`] keeps it (serializable, so a
/// shared store can hand a task started on one replica to another).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The task's id (random, 128 bits, hex).
    pub task_id: String,
    /// Where the task is.
    pub status: TaskStatus,
    /// ISO 8601 creation time (UTC).
    pub created_at: String,
    /// ISO 8601 time of the last change (UTC).
    pub last_updated_at: String,
    /// How long the task is kept after its creation, in ms.
    pub ttl_ms: u64,
    /// The tool the task runs.
    pub tool: String,
    /// The tool's arguments (the tool runs again with them once its input arrived).
    pub arguments: JsonObject,
    /// While `input_required`: the input requests still unanswered, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<JsonObject>,
    /// Every answer the client gave so far (`tasks/update`), by key.
    #[serde(default)]
    pub answers: JsonObject,
    /// When `completed`: the tool's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// When `failed`: the JSON-RPC error (`code`, `message`, `data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

impl TaskRecord {
    /// True once the task completed, failed or was cancelled.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self.status,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// Keeps tasks for the server ([`McpServer::task_store`](crate::server::McpServer::task_store)).
/// The default is a [`MemoryTaskStore`]; with the `redis` feature, a `RedisTaskStore` lets
/// every replica read every replica's tasks.
///
/// A store only stores: the server decides the transitions, writing a whole record each time.
/// `get` returns `None` for an unknown or expired task (the client then gets `-32602`).
///
/// ```
/// use mcp_core::server::{MemoryTaskStore, TaskStore};
///
/// let store: Box<dyn TaskStore> = Box::new(MemoryTaskStore::default());
/// # let _ = store;
/// ```
pub trait TaskStore: Send + Sync + 'static {
    /// Writes `record` (a new task, or a new state of a known one).
    fn put(&self, record: TaskRecord) -> BoxFuture<Result<(), McpError>>;
    /// The task `task_id`, unless unknown or expired.
    fn get(&self, task_id: &str) -> BoxFuture<Result<Option<TaskRecord>, McpError>>;
}

impl std::fmt::Debug for dyn TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("dyn TaskStore")
    }
}

/// The default [`TaskStore`]: this process's memory. Bounded: a task is dropped once its
/// `ttlMs` passed, and at most [`max_tasks`](Self::max_tasks) are kept (default
/// [`DEFAULT_MAX_TASKS`](Self::DEFAULT_MAX_TASKS)); when full, the task that would expire
/// first is dropped to make room. Tasks do not survive a restart and are not seen by other
/// replicas.
#[derive(Debug)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, (TaskRecord, Instant)>>,
    max: usize,
}

impl MemoryTaskStore {
    /// How many tasks the default store keeps at most.
    pub const DEFAULT_MAX_TASKS: usize = 10_000;

    /// A store keeping at most `max` tasks (at least 1).
    pub fn max_tasks(max: usize) -> Self {
        Self {
            tasks: Mutex::new(HashMap::new()),
            max: max.max(1),
        }
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::max_tasks(Self::DEFAULT_MAX_TASKS)
    }
}

impl TaskStore for MemoryTaskStore {
    fn put(&self, record: TaskRecord) -> BoxFuture<Result<(), McpError>> {
        let now = Instant::now();
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.retain(|_, (_, expires)| *expires > now);
        let expires = match tasks.get(&record.task_id) {
            Some((_, expires)) => *expires,
            None => {
                if tasks.len() >= self.max {
                    let first = tasks
                        .iter()
                        .min_by_key(|(_, (_, expires))| *expires)
                        .map(|(id, _)| id.clone());
                    if let Some(id) = first {
                        tasks.remove(&id);
                    }
                }
                now + Duration::from_millis(record.ttl_ms)
            }
        };
        tasks.insert(record.task_id.clone(), (record, expires));
        Box::pin(async { Ok(()) })
    }

    fn get(&self, task_id: &str) -> BoxFuture<Result<Option<TaskRecord>, McpError>> {
        let tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        let found = tasks
            .get(task_id)
            .filter(|(_, expires)| *expires > Instant::now())
            .map(|(record, _)| record.clone());
        Box::pin(async move { Ok(found) })
    }
}
