//! Running a task's tool in the background and recording how the run ended.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use serde_json::Value;

use super::store::TaskRecord;
use super::{clock, created, new_record, Tasks, MAX_RETRIES};
use crate::error::McpError;
use crate::lowlevel::round::Round;
use crate::lowlevel::{CallInfo, RequestContext};
use crate::request_state::Answer;
use crate::server::execute::{execute, Ran};
use crate::server::tool::ToolDef;
use crate::types::{JsonObject, TaskStatus};

/// Runs the tool of `record` in the background, with the answers gathered so far, in the
/// context of the request `template` (the `tools/call` that created it, or the `tasks/update`
/// that answered its last question). The run is stopped at the task's expiry.
pub(super) fn spawn<S: Send + Sync + 'static>(
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
    let args = record.arguments.clone();
    // Serializing a map of JSON values cannot fail.
    let source = serde_json::to_string(&record.arguments).unwrap_or_default();
    let run = Box::pin(async move { execute(&def, ctx, args.into(), &source).await });
    in_background(tasks, record, run);
}

/// Runs `run` (the task `record`'s tool) in the background until it ends or the task
/// expires, then records how it ended.
fn in_background(
    tasks: &Arc<Tasks>,
    record: &TaskRecord,
    run: std::pin::Pin<Box<dyn Future<Output = Ran> + Send>>,
) {
    let owner = tasks.clone();
    let id = record.task_id.clone();
    let lifetime = record.remaining();
    // Held while spawning, so a run that ends at once removes its entry after this.
    let mut running = tasks.running();
    let handle = tokio::spawn(async move {
        let me = tokio::task::id();
        match tokio::time::timeout(lifetime, run).await {
            Ok(ran) => {
                if let Err(e) = settle(&owner, &id, ran).await {
                    tracing::error!(task = %id, error = %e, "could not record a task's outcome");
                }
            }
            Err(_) => {
                tracing::debug!(task = %id, "a task expired while its tool ran; the run is stopped");
                owner.live().release(&id);
            }
        }
        // Only its own entry: a later run of the task (after a `tasks/update`) may hold it.
        let mut running = owner.running();
        if running.get(&id).is_some_and(|handle| handle.id() == me) {
            running.remove(&id);
        }
    });
    running.insert(record.task_id.clone(), handle.abort_handle());
}

/// [`ToolDef::input_before_task`]: runs the handler in the request up to its first wait. A
/// question on the way is this request's `input_required` answer; past them, the task starts
/// (already settled if the handler finished without waiting).
pub(super) async fn start_after_input<S: Send + Sync + 'static>(
    tasks: &Arc<Tasks>,
    def: &Arc<ToolDef<S>>,
    ctx: &RequestContext<S>,
    args: &JsonObject,
    source: &str,
) -> Result<Option<Value>, McpError> {
    let mut record = new_record(def, ctx, args, tasks.ttl_ms())?;
    if let Some(round) = ctx.info.round.get() {
        // The answers gathered in the request, for a later round of the task.
        for (key, answer) in &round.answers {
            record.answers.insert(key.clone(), answer.value.clone());
        }
    }
    let source = source.to_owned();
    let (def2, ctx2, args2) = (def.clone(), ctx.clone(), args.clone());
    let mut run: std::pin::Pin<Box<dyn Future<Output = Ran> + Send>> =
        Box::pin(async move { execute(&def2, ctx2, args2.into(), &source).await });
    // Counted before the handler runs at all: a client at its limit is refused first.
    tasks.admit(&record).await?;
    let first = std::future::poll_fn(|cx| Poll::Ready(run.as_mut().poll(cx))).await;
    match first {
        Poll::Ready(Ran::Protocol(e)) => {
            tasks.live().release(&record.task_id);
            Err(e)
        }
        Poll::Ready(ran) => {
            tasks.store_new(&record).await?;
            settle(tasks, &record.task_id, ran).await?;
            let settled = tasks.load(&record.task_id).await?.unwrap_or(record);
            Ok(Some(created(&settled)))
        }
        Poll::Pending => {
            tasks.store_new(&record).await?;
            in_background(tasks, &record, run);
            Ok(Some(created(&record)))
        }
    }
}

/// How a run ended, as it changes the task.
enum Outcome {
    Completed(Value),
    InputRequired(JsonObject),
    Failed(Value),
    Crashed,
}

impl Outcome {
    fn of(ran: Ran) -> Result<Self, McpError> {
        Ok(match ran {
            Ran::Done(result) => Self::Completed(serde_json::to_value(result)?),
            Ran::Protocol(e) => match e.into_input_required() {
                Ok(paused) => Self::InputRequired(paused.input_requests.unwrap_or_default()),
                Err(e) => Self::Failed(serde_json::to_value(e.to_wire(false))?),
            },
            // (`Unread` is for a call's own text; a task runs on the checked object.)
            Ran::Crashed | Ran::Unread => Self::Crashed,
        })
    }

    fn apply(&self, record: &mut TaskRecord) -> Result<(), McpError> {
        record.input_requests = None;
        match self {
            Self::Completed(result) => {
                record.status = TaskStatus::Completed;
                record.result = Some(result.clone());
            }
            Self::InputRequired(requests) => {
                record.status = TaskStatus::InputRequired;
                record.input_requests = Some(requests.clone());
            }
            Self::Failed(error) => {
                record.status = TaskStatus::Failed;
                record.error = Some(error.clone());
            }
            Self::Crashed => {
                record.status = TaskStatus::Failed;
                let e = McpError::internal(format!("Error executing tool {}", record.tool));
                record.error = Some(serde_json::to_value(e.to_wire(false))?);
            }
        }
        record.last_updated_at = clock::now_iso();
        Ok(())
    }
}

/// Records how a run ended, unless the task ended meanwhile (cancelled): a compare-and-set,
/// so a `tasks/cancel` that lands first is never overwritten.
pub(super) async fn settle(tasks: &Tasks, task_id: &str, ran: Ran) -> Result<(), McpError> {
    let outcome = Outcome::of(ran)?;
    for _ in 0..MAX_RETRIES {
        let Some(mut record) = tasks.load(task_id).await? else {
            tasks.live().release(task_id);
            return Ok(());
        };
        if record.is_terminal() {
            tasks.live().release(task_id);
            return Ok(());
        }
        outcome.apply(&mut record)?;
        if tasks.replace(record).await? {
            return Ok(());
        }
    }
    Err(super::contended(task_id))
}
