//! Where tasks live: the [`TaskStore`] trait and its in-memory default, [`MemoryTaskStore`].

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{codes, McpError};
use crate::lowlevel::BoxFuture;
use crate::types::{JsonObject, TaskStatus};

/// Everything a server knows about one task, as a [`TaskStore`] keeps it (serializable, so a
/// shared store can hand a task started on one replica to another).
///
/// The server writes records; a store keeps them and compares [`version`](Self::version)s so
/// that two writers (two replicas, or a cancel racing the tool's end) never both win.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task's id (random, 128 bits, hex).
    pub task_id: String,
    /// Who may see and steer the task: the identity of the authenticated principal that
    /// created it ([`Principal::identity`](crate::auth::Principal::identity)), `None` when
    /// the request carried none. A request from anyone else is told the task is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// A tag the server sets afresh (at random, below 10^14) on every write: what a
    /// [`replace`](TaskStore::replace) compares, and how a retried write recognises itself.
    #[serde(default)]
    pub version: u64,
    /// Where the task is.
    pub status: TaskStatus,
    /// ISO 8601 creation time (UTC).
    pub created_at: String,
    /// ISO 8601 time of the last change (UTC).
    pub last_updated_at: String,
    /// How long the task is kept after its creation, in ms.
    pub ttl_ms: u64,
    /// When the task expires: creation time plus `ttl_ms`, in ms since the Unix epoch. A store
    /// drops the task then, however often it changed meanwhile.
    #[serde(default)]
    pub expires_at_ms: u64,
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

    /// How long until the task expires (zero once it has).
    pub fn remaining(&self) -> Duration {
        Duration::from_millis(self.expires_at_ms.saturating_sub(super::clock::now_ms()))
    }
}

/// Keeps tasks for the server ([`McpServer::task_store`](crate::server::McpServer::task_store)).
/// The default is a [`MemoryTaskStore`]; with the `redis` feature, a `RedisTaskStore` lets
/// every replica read every replica's tasks.
///
/// A store only stores: the server decides the transitions. Every change is a
/// compare-and-set on [`TaskRecord::version`], so of two writers that read the same state
/// (a `tasks/cancel` and the tool finishing, two `tasks/update`s, two replicas) exactly one
/// wins and the other reads again. A store drops a task at its
/// [`expires_at_ms`](TaskRecord::expires_at_ms); `get` returns `None` for an unknown or
/// expired task (the client then gets `-32602`).
///
/// ```
/// use modelctx_core::server::{MemoryTaskStore, TaskStore};
///
/// let store: Box<dyn TaskStore> = Box::new(MemoryTaskStore::default());
/// # let _ = store;
/// ```
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task. Fails when the store is full, or holds another task of its id (a
    /// retry of a create already stored succeeds).
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), McpError>>;
    /// The task `task_id`, unless unknown or expired.
    fn get(&self, task_id: &str) -> BoxFuture<Result<Option<TaskRecord>, McpError>>;
    /// Replaces the task with `record` if the stored one still has the version `read` (the
    /// one the caller read; `record.version` is the new one). `Ok(false)`: the task changed
    /// meanwhile, or is gone; nothing was written. A write already stored (the stored version
    /// is `record.version`: a retry after a lost reply) is `Ok(true)`. The expiry stays the
    /// record's `expires_at_ms`.
    fn replace(&self, record: TaskRecord, read: u64) -> BoxFuture<Result<bool, McpError>>;
}

impl std::fmt::Debug for dyn TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("dyn TaskStore")
    }
}

/// The default [`TaskStore`]: this process's memory. Bounded: a task is dropped at its
/// expiry (`ttlMs` after its creation), and at most [`max_tasks`](Self::max_tasks) are kept
/// (default [`DEFAULT_MAX_TASKS`](Self::DEFAULT_MAX_TASKS)). When full, the ended task
/// (completed, failed or cancelled) that would expire first makes room; a store full of
/// unfinished tasks refuses new ones (the server's own limits,
/// [`McpServer::max_tasks`](crate::server::McpServer::max_tasks), normally keep it from
/// getting there). Tasks do not survive a restart and are not seen by other replicas.
#[derive(Debug)]
pub struct MemoryTaskStore {
    inner: Mutex<Memory>,
    max: usize,
}

#[derive(Debug, Default)]
struct Memory {
    tasks: HashMap<String, (TaskRecord, Instant)>,
    /// Every task by expiry, soonest first.
    by_expiry: BTreeSet<(Instant, String)>,
    /// The ended tasks by expiry: the ones that make room when the store is full.
    ended: BTreeSet<(Instant, String)>,
}

impl Memory {
    fn remove(&mut self, id: &str) {
        if let Some((_, expires)) = self.tasks.remove(id) {
            let key = (expires, id.to_owned());
            self.by_expiry.remove(&key);
            self.ended.remove(&key);
        }
    }

    fn purge_expired(&mut self, now: Instant) {
        while let Some((expires, id)) = self.by_expiry.first().cloned() {
            if expires > now {
                break;
            }
            self.remove(&id);
        }
    }
}

impl MemoryTaskStore {
    /// How many tasks the default store keeps at most.
    pub const DEFAULT_MAX_TASKS: usize = 10_000;

    /// A store keeping at most `max` tasks (at least 1).
    pub fn max_tasks(max: usize) -> Self {
        Self {
            inner: Mutex::new(Memory::default()),
            max: max.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::max_tasks(Self::DEFAULT_MAX_TASKS)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), McpError>> {
        let now = Instant::now();
        let mut memory = self.lock();
        memory.purge_expired(now);
        if let Some((stored, _)) = memory.tasks.get(&record.task_id) {
            let taken = *stored != record;
            return Box::pin(async move {
                match taken {
                    true => Err(McpError::internal("task store: the task id is taken")),
                    false => Ok(()),
                }
            });
        }
        if memory.tasks.len() >= self.max {
            match memory.ended.first().cloned() {
                Some((_, id)) => memory.remove(&id),
                None => {
                    let max = self.max;
                    return Box::pin(async move {
                        Err(McpError::new(
                            codes::INTERNAL_ERROR,
                            format!(
                                "Too many unfinished tasks on this server (the limit is {max}); \
                                 try again later"
                            ),
                        ))
                    });
                }
            }
        }
        let expires = now + record.remaining();
        let id = record.task_id.clone();
        memory.by_expiry.insert((expires, id.clone()));
        if record.is_terminal() {
            memory.ended.insert((expires, id.clone()));
        }
        memory.tasks.insert(id, (record, expires));
        Box::pin(async { Ok(()) })
    }

    fn get(&self, task_id: &str) -> BoxFuture<Result<Option<TaskRecord>, McpError>> {
        let memory = self.lock();
        let found = memory
            .tasks
            .get(task_id)
            .filter(|(_, expires)| *expires > Instant::now())
            .map(|(record, _)| record.clone());
        Box::pin(async move { Ok(found) })
    }

    fn replace(&self, record: TaskRecord, read: u64) -> BoxFuture<Result<bool, McpError>> {
        let mut memory = self.lock();
        let now = Instant::now();
        let expires = match memory.tasks.get(&record.task_id) {
            Some((stored, expires)) if *expires > now && stored.version == record.version => {
                // Already written (a retry): nothing to do.
                return Box::pin(async { Ok(true) });
            }
            Some((stored, expires)) if *expires > now && stored.version == read => *expires,
            _ => return Box::pin(async { Ok(false) }),
        };
        if record.is_terminal() {
            memory.ended.insert((expires, record.task_id.clone()));
        }
        memory
            .tasks
            .insert(record.task_id.clone(), (record, expires));
        Box::pin(async { Ok(true) })
    }
}
