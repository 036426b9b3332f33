//! The 2026 tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) on the server side:
//! see [`TaskSupport`] for what a client sees.

mod clock;
mod limits;
#[cfg(feature = "redis")]
mod redis;
mod run;
mod store;
pub(crate) mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::registry::Registry;
use super::tool::ToolDef;
use crate::error::McpError;
use crate::events::{BusCell, Event};
use crate::lowlevel::{RequestContext, Server};
use crate::types::{JsonObject, TaskRequestParams, TaskStatus};

#[cfg(feature = "redis")]
pub use redis::{RedisTaskStore, DEFAULT_TASK_PREFIX};
pub use store::{MemoryTaskStore, TaskRecord, TaskStore};
use support::{declared, missing_extension};
pub use support::{TaskSupport, TASKS_EXTENSION};

/// How long a task is kept after its creation unless the server says otherwise: one hour.
const DEFAULT_TTL_MS: u64 = 3_600_000;

/// The longest `ttlMs` a server gives its tasks: 30 days.
pub(crate) const MAX_TTL_MS: u64 = 30 * 24 * 3_600_000;

/// The polling interval suggested to clients: 500 ms.
const POLL_INTERVAL_MS: u64 = 500;

/// How many task ids of one `subscriptions/listen` filter are honoured (each is looked up in
/// the store); the rest are left out of the acknowledged filter.
const MAX_LISTENED_TASKS: usize = 64;

/// How often a transition is tried again after losing a race to another writer.
const MAX_RETRIES: usize = 32;

/// The server's tasks: the store, the tools running here and the limits on them.
pub(crate) struct Tasks {
    store: RwLock<Arc<dyn TaskStore>>,
    running: Mutex<HashMap<String, tokio::task::AbortHandle>>,
    live: Mutex<limits::Live>,
    bus: BusCell,
    ttl_ms: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").finish_non_exhaustive()
    }
}

impl Tasks {
    /// Tasks in a [`MemoryTaskStore`], their changes published on `bus`.
    pub(crate) fn new(bus: BusCell) -> Self {
        Self {
            store: RwLock::new(Arc::new(MemoryTaskStore::default())),
            running: Mutex::new(HashMap::new()),
            live: Mutex::new(limits::Live::default()),
            bus,
            ttl_ms: std::sync::atomic::AtomicU64::new(DEFAULT_TTL_MS),
        }
    }

    pub(crate) fn set_ttl(&self, ttl: std::time::Duration) {
        let ms = u64::try_from(ttl.as_millis())
            .unwrap_or(u64::MAX)
            .clamp(1, MAX_TTL_MS);
        self.ttl_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn set_limits(&self, max: Option<usize>, per_client: Option<usize>) {
        self.live().set_limits(max, per_client);
    }

    fn ttl_ms(&self) -> u64 {
        self.ttl_ms.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Writes a changed `record` if nobody changed the task since it was read, and tells
    /// listeners its status. `Ok(false)`: the task changed meanwhile (read it again).
    async fn replace(&self, record: TaskRecord) -> Result<bool, McpError> {
        let event = Event::TaskStatus {
            task_id: record.task_id.clone(),
            status: serde_json::to_value(record.status)?
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        };
        let ended = record.is_terminal().then(|| record.task_id.clone());
        if !self.write(record).await? {
            return Ok(false);
        }
        if let Some(id) = ended {
            self.live().release(&id);
        }
        // A refused publish is logged by the bus; the task itself is saved.
        let _ = self.bus.publish(event);
        Ok(true)
    }

    /// Writes a changed `record` (read at its current version) under a fresh version if the
    /// task did not change since; no listener is told.
    async fn write(&self, mut record: TaskRecord) -> Result<bool, McpError> {
        let read = record.version;
        record.version = new_version()?;
        self.store().replace(record, read).await
    }

    /// Counts a new task against the limits until it ends. At a limit, the tasks it counts
    /// are first checked in the store (one that ended on another replica, or expired, is no
    /// longer counted), so a client is refused only for tasks that are really unfinished.
    async fn admit(&self, record: &TaskRecord) -> Result<(), McpError> {
        let expires = Instant::now() + record.remaining();
        let (id, owner) = (&record.task_id, record.owner.as_deref());
        let refused = match self.live().admit(id, owner, expires) {
            Ok(()) => return Ok(()),
            Err(refused) => refused,
        };
        let counted = self.live().counted(&refused, owner);
        for counted_id in counted {
            match self.load(&counted_id).await? {
                Some(task) if !task.is_terminal() => {}
                _ => self.live().release(&counted_id),
            }
        }
        self.live()
            .admit(id, owner, expires)
            .map_err(McpError::from)
    }

    /// Stores a new task already admitted (its count is given back if storing fails).
    async fn store_new(&self, record: &TaskRecord) -> Result<(), McpError> {
        let created = self.store().create(record.clone()).await;
        if created.is_err() {
            self.live().release(&record.task_id);
        }
        created
    }

    /// Stores a new task, counted against the limits until it ends.
    async fn create(&self, record: &TaskRecord) -> Result<(), McpError> {
        self.admit(record).await?;
        self.store_new(record).await
    }

    /// The task `task_id` from the store, unless unknown or expired (a record filed under
    /// another id is refused, never served).
    async fn load(&self, task_id: &str) -> Result<Option<TaskRecord>, McpError> {
        match self.store().get(task_id).await? {
            Some(record) if record.task_id != task_id => {
                tracing::error!("the task store answered with another task's record; ignored");
                Ok(None)
            }
            found => Ok(found),
        }
    }

    pub(crate) fn set_store(&self, store: Arc<dyn TaskStore>) {
        *self.store.write().unwrap_or_else(|e| e.into_inner()) = store;
    }

    fn store(&self) -> Arc<dyn TaskStore> {
        self.store.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, tokio::task::AbortHandle>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn live(&self) -> std::sync::MutexGuard<'_, limits::Live> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Of `ids`, the tasks the caller of `ctx` may hear of (known, not expired, its own), at
    /// most [`MAX_LISTENED_TASKS`].
    pub(crate) async fn visible<S: Send + Sync + 'static>(
        &self,
        ctx: &RequestContext<S>,
        ids: Vec<String>,
    ) -> Result<Vec<String>, McpError> {
        let owner = owner_of(ctx);
        let mut ids = ids;
        ids.sort_unstable();
        ids.dedup();
        let mut visible = Vec::new();
        for id in ids.into_iter().take(MAX_LISTENED_TASKS) {
            if let Some(record) = self.load(&id).await? {
                if record.owner == owner {
                    visible.push(id);
                }
            }
        }
        Ok(visible)
    }
}

/// Who owns the tasks a request creates: its authenticated principal, if any.
fn owner_of<S: Send + Sync + 'static>(ctx: &RequestContext<S>) -> Option<String> {
    #[cfg(feature = "http")]
    {
        ctx.principal().map(|p| p.identity())
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = ctx;
        None
    }
}

/// What starting a task may answer: the `CreateTaskResult`, or `None` when the call ran to
/// its end in the request after all (see [`ToolDef::input_before_task`]).
pub(crate) type Starting<'a> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Option<Value>, McpError>> + Send + 'a>,
>;

/// Decides how a 2026 `tools/call` of `def` runs: `Ok(None)` synchronously, `Ok(Some(start))`
/// as a task, which `start` creates. Boxed so the common synchronous call does not carry the
/// task machinery's state. `source`: the arguments as the client wrote them.
pub(crate) fn maybe_start<'a, S: Send + Sync + 'static>(
    tasks: &'a Arc<Tasks>,
    def: &'a Arc<ToolDef<S>>,
    ctx: &'a RequestContext<S>,
    args: &'a JsonObject,
    source: &'a str,
) -> Result<Option<Starting<'a>>, McpError> {
    match (def.task_support, declared(ctx)) {
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(None),
        (TaskSupport::Required, false) => Err(missing_extension(&format!(
            "tool {} runs only as a task",
            def.tool.name
        ))),
        (_, true) if def.input_first => Ok(Some(Box::pin(run::start_after_input(
            tasks, def, ctx, args, source,
        )))),
        (_, true) => Ok(Some(Box::pin(async move {
            let record = new_record(def, ctx, args, tasks.ttl_ms())?;
            // Durable before the client hears of it: an immediate tasks/get finds it.
            tasks.create(&record).await?;
            run::spawn(tasks, def.clone(), &ctx.info, &record);
            Ok(Some(created(&record)))
        }))),
    }
}

fn new_record<S: Send + Sync + 'static>(
    def: &ToolDef<S>,
    ctx: &RequestContext<S>,
    args: &JsonObject,
    ttl_ms: u64,
) -> Result<TaskRecord, McpError> {
    let now = clock::now_ms();
    Ok(TaskRecord {
        task_id: crate::random_id::random_id()?,
        owner: owner_of(ctx),
        version: new_version()?,
        status: TaskStatus::Working,
        created_at: clock::iso(now),
        last_updated_at: clock::iso(now),
        ttl_ms,
        expires_at_ms: now.saturating_add(ttl_ms),
        tool: def.tool.name.clone(),
        arguments: args.clone(),
        input_requests: None,
        answers: Map::new(),
        result: None,
        error: None,
    })
}

/// The flat `CreateTaskResult`.
fn created(record: &TaskRecord) -> Value {
    json!({
        "resultType": "task",
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": record.created_at,
        "lastUpdatedAt": record.last_updated_at,
        "ttlMs": record.ttl_ms,
        "pollIntervalMs": POLL_INTERVAL_MS,
    })
}

/// A fresh [`TaskRecord::version`]: random, below 10^14.
fn new_version() -> Result<u64, McpError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| McpError::internal(format!("no randomness: {e}")))?;
    Ok(u64::from_le_bytes(bytes) % 100_000_000_000_000)
}

/// Serves `tasks/get`, `tasks/update` and `tasks/cancel` from `tasks`, running tools from
/// `registry`.
pub(crate) fn install<S: Send + Sync + 'static>(
    server: &mut Server<S>,
    tasks: &Arc<Tasks>,
    registry: &Arc<Registry<S>>,
) {
    let t = tasks.clone();
    server.set_request_handler(
        "tasks/get",
        crate::lowlevel::erase_request(move |ctx: RequestContext<S>, p: TaskRequestParams| {
            let t = t.clone();
            async move {
                let record = find(&t, &ctx, &p.task_id).await?;
                Ok(detailed(&record))
            }
        }),
    );
    let (t, reg) = (tasks.clone(), registry.clone());
    server.set_request_handler(
        "tasks/update",
        crate::lowlevel::erase_request(move |ctx: RequestContext<S>, p: Value| {
            let (t, reg) = (t.clone(), reg.clone());
            async move { update(&t, &reg, ctx, p).await }
        }),
    );
    let t = tasks.clone();
    server.set_request_handler(
        "tasks/cancel",
        crate::lowlevel::erase_request(move |ctx: RequestContext<S>, p: TaskRequestParams| {
            let t = t.clone();
            async move { cancel(&t, &ctx, &p.task_id).await }
        }),
    );
}

fn ack() -> Value {
    json!({"resultType": "complete"})
}

/// The task `task_id` for a request that declared the extension, or the error the extension
/// defines (`-32021` without it, `-32602` unknown). A task another principal created is
/// unknown to this caller, with the same answer as an id that never existed.
async fn find<S: Send + Sync + 'static>(
    tasks: &Tasks,
    ctx: &RequestContext<S>,
    task_id: &str,
) -> Result<TaskRecord, McpError> {
    if !declared(ctx) {
        return Err(missing_extension(&format!(
            "{} is a tasks method",
            ctx.method()
        )));
    }
    let owner = owner_of(ctx);
    match tasks.load(task_id).await? {
        Some(record) if record.owner == owner => Ok(record),
        found => {
            if found.is_some() {
                tracing::warn!("refused a tasks request for a task another principal created");
            }
            Err(McpError::invalid_params(format!(
                "Unknown task: {}",
                crate::error::echo_capped(task_id)
            )))
        }
    }
}

/// The `tasks/get` answer: the task, with what its status carries.
fn detailed(record: &TaskRecord) -> Value {
    let mut task = created(record);
    task["resultType"] = json!("complete");
    match record.status {
        TaskStatus::InputRequired => {
            task["inputRequests"] = Value::Object(record.input_requests.clone().unwrap_or_default())
        }
        TaskStatus::Completed => task["result"] = record.result.clone().unwrap_or(Value::Null),
        TaskStatus::Failed => task["error"] = record.error.clone().unwrap_or(Value::Null),
        _ => {}
    }
    task
}

/// `tasks/cancel`: an unfinished task becomes `cancelled` (its run here is stopped; a run on
/// another replica finds it cancelled when it ends and leaves it so); an ended one stays as
/// it is. Both are acknowledged.
async fn cancel<S: Send + Sync + 'static>(
    tasks: &Tasks,
    ctx: &RequestContext<S>,
    task_id: &str,
) -> Result<Value, McpError> {
    for _ in 0..MAX_RETRIES {
        let mut record = find(tasks, ctx, task_id).await?;
        if record.is_terminal() {
            return Ok(ack());
        }
        record.status = TaskStatus::Cancelled;
        record.input_requests = None;
        record.last_updated_at = clock::now_iso();
        if tasks.replace(record).await? {
            if let Some(running) = tasks.running().remove(task_id) {
                running.abort();
            }
            return Ok(ack());
        }
    }
    Err(contended(task_id))
}

fn contended(task_id: &str) -> McpError {
    McpError::internal(format!(
        "task {task_id} kept changing; gave up after {MAX_RETRIES} tries"
    ))
}

/// `tasks/update`: keeps the answers to questions the task is waiting for (others are
/// ignored); once none is left, runs the tool again with every answer. Of two updates that
/// answer the last question at once, one runs the tool; the other is acknowledged.
async fn update<S: Send + Sync + 'static>(
    tasks: &Arc<Tasks>,
    registry: &Registry<S>,
    ctx: RequestContext<S>,
    params: Value,
) -> Result<Value, McpError> {
    let Some(task_id) = params.get("taskId").and_then(Value::as_str) else {
        return Err(McpError::invalid_params(
            "Invalid params: tasks/update needs taskId (a string)",
        ));
    };
    let responses =
        match params.get("inputResponses") {
            None => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => return Err(McpError::invalid_params(
                "Invalid inputResponses: expected an object mapping each input request's key to \
                 the client's result",
            )),
        };
    for _ in 0..MAX_RETRIES {
        let mut record = find(tasks, &ctx, task_id).await?;
        if record.status != TaskStatus::InputRequired {
            return Ok(ack());
        }
        let mut pending = record.input_requests.take().unwrap_or_default();
        for (key, answer) in &responses {
            if pending.remove(key).is_some() {
                if !answer.is_object() {
                    return Err(McpError::invalid_params(format!(
                        "Invalid inputResponses: {}: expected an object (the client's result \
                         for that input request)",
                        crate::error::echo_capped(key)
                    )));
                }
                record.answers.insert(key.clone(), answer.clone());
            }
        }
        record.last_updated_at = clock::now_iso();
        if !pending.is_empty() {
            record.input_requests = Some(pending);
            if tasks.write(record).await? {
                return Ok(ack());
            }
            continue;
        }
        record.status = TaskStatus::Working;
        if !tasks.replace(record.clone()).await? {
            continue;
        }
        match registry.get(&record.tool) {
            Some(def) => run::spawn(tasks, def, &ctx.info, &record),
            None => {
                let ran = super::execute::Ran::Protocol(McpError::invalid_params(format!(
                    "Unknown tool: {}",
                    record.tool
                )));
                run::settle(tasks, &record.task_id, ran).await?;
            }
        }
        return Ok(ack());
    }
    Err(contended(task_id))
}
