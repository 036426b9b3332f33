//! The 2026 tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) on the server side:
//! see [`TaskSupport`] for what a client sees.

mod clock;
#[cfg(feature = "redis")]
mod redis;
mod store;
pub(crate) mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use serde_json::{json, Map, Value};

use super::execute::{execute, Ran};
use super::registry::Registry;
use super::tool::ToolDef;
use crate::error::McpError;
use crate::events::{BusCell, Event};
use crate::input::round::Round;
use crate::lowlevel::{CallInfo, RequestContext, Server};
use crate::request_state::Answer;
use crate::types::{JsonObject, TaskRequestParams, TaskStatus};

#[cfg(feature = "redis")]
pub use redis::{RedisTaskStore, DEFAULT_TASK_PREFIX};
pub use store::{MemoryTaskStore, TaskRecord, TaskStore};
use support::{declared, missing_extension};
pub use support::{TaskSupport, TASKS_EXTENSION};

/// How long a task is kept after its creation unless the server says otherwise: one hour.
const DEFAULT_TTL_MS: u64 = 3_600_000;

/// The polling interval suggested to clients: 500 ms.
const POLL_INTERVAL_MS: u64 = 500;

/// The server's tasks: the store and the tools running here.
pub(crate) struct Tasks {
    store: RwLock<Arc<dyn TaskStore>>,
    running: Mutex<HashMap<String, tokio::task::AbortHandle>>,
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
            bus,
            ttl_ms: std::sync::atomic::AtomicU64::new(DEFAULT_TTL_MS),
        }
    }

    pub(crate) fn set_ttl(&self, ttl: std::time::Duration) {
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.ttl_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    fn ttl_ms(&self) -> u64 {
        self.ttl_ms.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Writes `record` and tells listeners its status.
    async fn save(&self, record: TaskRecord) -> Result<(), McpError> {
        let event = Event::TaskStatus {
            task_id: record.task_id.clone(),
            status: serde_json::to_value(record.status)?
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        };
        self.store().put(record).await?;
        // A refused publish is logged by the bus; the task itself is saved.
        let _ = self.bus.publish(event);
        Ok(())
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
}

/// Decides how a 2026 `tools/call` of `def` runs: `Ok(None)` synchronously, `Ok(Some(..))`
/// as the task whose `CreateTaskResult` is returned.
pub(crate) async fn maybe_start<S: Send + Sync + 'static>(
    tasks: &Arc<Tasks>,
    def: &Arc<ToolDef<S>>,
    ctx: &RequestContext<S>,
    args: &JsonObject,
) -> Result<Option<Value>, McpError> {
    match (def.task_support, declared(ctx)) {
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(None),
        (TaskSupport::Required, false) => Err(missing_extension(&format!(
            "tool {} runs only as a task",
            def.tool.name
        ))),
        (_, true) if def.input_first => start_after_input(tasks, def, ctx, args).await,
        (_, true) => {
            let record = new_record(def, args, tasks.ttl_ms())?;
            // Durable before the client hears of it: an immediate tasks/get finds it.
            tasks.store().put(record.clone()).await?;
            spawn_run(tasks, def.clone(), &ctx.info, &record);
            Ok(Some(created(&record)))
        }
    }
}

fn new_record<S>(def: &ToolDef<S>, args: &JsonObject, ttl_ms: u64) -> Result<TaskRecord, McpError> {
    let now = clock::now_iso();
    Ok(TaskRecord {
        task_id: new_task_id()?,
        status: TaskStatus::Working,
        created_at: now.clone(),
        last_updated_at: now,
        ttl_ms,
        tool: def.tool.name.clone(),
        arguments: args.clone(),
        input_requests: None,
        answers: Map::new(),
        result: None,
        error: None,
    })
}

/// [`ToolDef::input_before_task`]: runs the handler in the request up to its first wait. A
/// question on the way is this request's `input_required` answer; past them, the task starts
/// (already settled if the handler finished without waiting).
async fn start_after_input<S: Send + Sync + 'static>(
    tasks: &Arc<Tasks>,
    def: &Arc<ToolDef<S>>,
    ctx: &RequestContext<S>,
    args: &JsonObject,
) -> Result<Option<Value>, McpError> {
    let mut record = new_record(def, args, tasks.ttl_ms())?;
    if let Some(round) = ctx.info.round.get() {
        // The answers gathered in the request, for a later round of the task.
        for (key, answer) in &round.answers {
            record.answers.insert(key.clone(), answer.value.clone());
        }
    }
    let source = Value::Object(args.clone()).to_string();
    let (def2, ctx2, args2) = (def.clone(), ctx.clone(), args.clone());
    let mut run = Box::pin(async move { execute(&def2, ctx2, args2, &source).await });
    let first = std::future::poll_fn(|cx| {
        std::task::Poll::Ready(std::future::Future::poll(run.as_mut(), cx))
    })
    .await;
    match first {
        std::task::Poll::Ready(Ran::Protocol(e)) => Err(e),
        std::task::Poll::Ready(ran) => {
            tasks.store().put(record.clone()).await?;
            settle(tasks, &record.task_id, ran).await?;
            let settled = tasks.store().get(&record.task_id).await?.unwrap_or(record);
            Ok(Some(created(&settled)))
        }
        std::task::Poll::Pending => {
            tasks.store().put(record.clone()).await?;
            let owner = tasks.clone();
            let id = record.task_id.clone();
            // Held while spawning, so a run that ends at once removes its entry after this.
            let mut running = tasks.running();
            let handle = tokio::spawn(async move {
                let ran = run.await;
                if let Err(e) = settle(&owner, &id, ran).await {
                    tracing::error!(task = %id, error = %e, "could not record a task's outcome");
                }
                owner.running().remove(&id);
            });
            running.insert(record.task_id.clone(), handle.abort_handle());
            drop(running);
            Ok(Some(created(&record)))
        }
    }
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

fn new_task_id() -> Result<String, McpError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| McpError::internal(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Runs the tool of `record` in the background, with the answers gathered so far, in the
/// context of the request `template` (the `tools/call` that created it, or the `tasks/update`
/// that answered its last question).
fn spawn_run<S: Send + Sync + 'static>(
    tasks: &Arc<Tasks>,
    def: Arc<ToolDef<S>>,
    template: &CallInfo<S>,
    record: &TaskRecord,
) {
    let mut round = Round::default();
    for (key, value) in &record.answers {
        round.answers.insert(
            key.clone(),
            Answer {
                question: None,
                value: value.clone(),
            },
        );
    }
    let info = Arc::new(template.for_task(round));
    let Some(ctx) = RequestContext::new(info) else {
        return;
    };
    let (task_id, args) = (record.task_id.clone(), record.arguments.clone());
    let source = Value::Object(args.clone()).to_string();
    let owner = tasks.clone();
    let id = task_id.clone();
    // Held while spawning, so a run that ends at once removes its entry after this.
    let mut running = tasks.running();
    let handle = tokio::spawn(async move {
        let ran = execute(&def, ctx, args, &source).await;
        if let Err(e) = settle(&owner, &id, ran).await {
            tracing::error!(task = %id, error = %e, "could not record a task's outcome");
        }
        owner.running().remove(&id);
    });
    running.insert(task_id, handle.abort_handle());
}

/// Records how a run ended, unless the task ended meanwhile (cancelled).
async fn settle(tasks: &Tasks, task_id: &str, ran: Ran) -> Result<(), McpError> {
    let store = tasks.store();
    let Some(mut record) = store.get(task_id).await? else {
        return Ok(());
    };
    if record.is_terminal() {
        return Ok(());
    }
    match ran {
        Ran::Done(result) => {
            record.status = TaskStatus::Completed;
            record.result = Some(serde_json::to_value(result)?);
            record.input_requests = None;
        }
        Ran::Protocol(e) => match e.into_input_required() {
            Ok(paused) => {
                record.status = TaskStatus::InputRequired;
                record.input_requests = Some(paused.input_requests.unwrap_or_default());
            }
            Err(e) => {
                record.status = TaskStatus::Failed;
                record.error = Some(serde_json::to_value(e.to_wire(false))?);
                record.input_requests = None;
            }
        },
        Ran::Crashed => {
            record.status = TaskStatus::Failed;
            let e = McpError::internal(format!("Error executing tool {}", record.tool));
            record.error = Some(serde_json::to_value(e.to_wire(false))?);
            record.input_requests = None;
        }
    }
    record.last_updated_at = clock::now_iso();
    tasks.save(record).await
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
            async move {
                let mut record = find(&t, &ctx, &p.task_id).await?;
                if let Some(running) = t.running().remove(&record.task_id) {
                    running.abort();
                }
                if !record.is_terminal() {
                    record.status = TaskStatus::Cancelled;
                    record.input_requests = None;
                    record.last_updated_at = clock::now_iso();
                    t.save(record).await?;
                }
                Ok(ack())
            }
        }),
    );
}

fn ack() -> Value {
    json!({"resultType": "complete"})
}

/// The task `task_id` for a request that declared the extension, or the error the extension
/// defines (`-32021` without it, `-32602` unknown).
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
    tasks.store().get(task_id).await?.ok_or_else(|| {
        McpError::invalid_params(format!(
            "Unknown task: {}",
            crate::error::echo_capped(task_id)
        ))
    })
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

/// `tasks/update`: keeps the answers to questions the task is waiting for (others are
/// ignored); once none is left, runs the tool again with every answer.
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
    let mut record = find(tasks, &ctx, task_id).await?;
    if record.status != TaskStatus::InputRequired {
        return Ok(ack());
    }
    let mut pending = record.input_requests.take().unwrap_or_default();
    for (key, answer) in responses {
        if pending.remove(&key).is_some() {
            if !answer.is_object() {
                return Err(McpError::invalid_params(format!(
                    "Invalid inputResponses: {}: expected an object (the client's result for \
                     that input request)",
                    crate::error::echo_capped(&key)
                )));
            }
            record.answers.insert(key, answer);
        }
    }
    record.last_updated_at = clock::now_iso();
    if !pending.is_empty() {
        record.input_requests = Some(pending);
        tasks.store().put(record).await?;
        return Ok(ack());
    }
    record.status = TaskStatus::Working;
    tasks.save(record.clone()).await?;
    match registry.get(&record.tool) {
        Some(def) => spawn_run(tasks, def, &ctx.info, &record),
        None => {
            let ran = Ran::Protocol(McpError::invalid_params(format!(
                "Unknown tool: {}",
                record.tool
            )));
            settle(tasks, &record.task_id, ran).await?;
        }
    }
    Ok(ack())
}
