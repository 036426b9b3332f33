//! The part of a connection both roles share: request ids, the map of requests waiting for
//! their answer, and the guard that forgets a request however its wait ends (answer, drop,
//! timeout, connection loss) ([`PendingRequests`]); and the requests the peer sent that run
//! here, for cancellation ([`RunningRequests`]).
//!
//! The server waits in [`PendingRequests`] for its server-to-client requests (2025
//! `elicitation/create`, `sampling/createMessage`, `roots/list`, `ping`), the client for
//! every request it sends; neither keeps a map of its own.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use crate::error::ErrorObject;
use crate::error::McpError;
use crate::jsonrpc::RequestId;

/// What a waiting request is resolved with: the raw result, or the peer's error.
pub(crate) type Outcome = Result<Box<RawValue>, ErrorObject>;

/// Requests this side sent and has not had an answer to.
pub(crate) struct PendingRequests {
    /// Prefix of string ids (`"s-"` on the server, so they never collide with a client's);
    /// `None` gives integer ids.
    prefix: Option<&'static str>,
    next: AtomicI64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    waiting: HashMap<RequestId, oneshot::Sender<Result<Outcome, McpError>>>,
    /// Set once the connection is gone: why, for every later or still waiting request.
    closed: Option<Arc<str>>,
}

impl PendingRequests {
    /// A map whose ids are integers (`None`) or `"{prefix}{n}"` strings.
    pub(crate) fn new(prefix: Option<&'static str>) -> Arc<Self> {
        Arc::new(Self {
            prefix,
            next: AtomicI64::new(1),
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Plain data: a panic while holding the lock leaves nothing half-changed.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Allocates an id and starts waiting for its answer. Fails with the recorded reason once
    /// the connection is closed.
    pub(crate) fn register(self: &Arc<Self>) -> Result<Awaiting, McpError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = match self.prefix {
            Some(prefix) => RequestId::String(format!("{prefix}{n}").into()),
            None => RequestId::Number(n),
        };
        let (tx, rx) = oneshot::channel();
        let mut state = self.state();
        if let Some(reason) = &state.closed {
            return Err(McpError::internal(reason.to_string()));
        }
        state.waiting.insert(id.clone(), tx);
        Ok(Awaiting {
            pending: self.clone(),
            id,
            rx: Some(rx),
        })
    }

    /// Delivers the peer's answer to the request `id`; false when nothing waits for it (an
    /// unknown id, or a request already given up).
    pub(crate) fn resolve(&self, id: &RequestId, outcome: Outcome) -> bool {
        match self.state().waiting.remove(id) {
            Some(tx) => tx.send(Ok(outcome)).is_ok(),
            None => false,
        }
    }

    #[cfg(feature = "client")]
    /// Fails the request `id` with `error` (the transport could not deliver it).
    pub(crate) fn fail(&self, id: &RequestId, error: McpError) -> bool {
        match self.state().waiting.remove(id) {
            Some(tx) => tx.send(Err(error)).is_ok(),
            None => false,
        }
    }

    /// The connection is gone: every waiting request, and every later one, fails with `reason`.
    pub(crate) fn close(&self, reason: &str) {
        let waiting = {
            let mut state = self.state();
            state.closed.get_or_insert_with(|| reason.into());
            std::mem::take(&mut state.waiting)
        };
        for (_, tx) in waiting {
            let _ = tx.send(Err(McpError::internal(reason.to_owned())));
        }
    }

    #[cfg(feature = "client")]
    /// True once [`close`](Self::close) ran.
    pub(crate) fn is_closed(&self) -> bool {
        self.state().closed.is_some()
    }

    fn forget(&self, id: &RequestId) -> bool {
        self.state().waiting.remove(id).is_some()
    }
}

/// One request waiting for its answer. Dropping it (before the answer) forgets the request, so
/// a late answer is ignored; [`Awaiting::answered`] tells the owner whether to tell the peer.
pub(crate) struct Awaiting {
    pending: Arc<PendingRequests>,
    id: RequestId,
    rx: Option<oneshot::Receiver<Result<Outcome, McpError>>>,
}

impl Awaiting {
    /// The request's id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// Waits for the answer: the peer's result, its error (as an [`McpError`] with its code),
    /// or why the connection could not deliver one.
    /// Cancel-safe: dropping the future before the answer leaves the request waiting (and
    /// dropping `self` then forgets it).
    pub(crate) async fn wait(&mut self) -> Result<Box<RawValue>, McpError> {
        let Some(rx) = self.rx.as_mut() else {
            return Err(McpError::internal("the request was already answered"));
        };
        let outcome = rx.await;
        self.rx = None;
        match outcome {
            Ok(Ok(Ok(raw))) => Ok(raw),
            Ok(Ok(Err(e))) => Err(McpError::from_wire(e)),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(McpError::internal(
                self.pending
                    .state()
                    .closed
                    .as_deref()
                    .unwrap_or("the connection closed before the answer")
                    .to_owned(),
            )),
        }
    }

    #[cfg(feature = "client")]
    /// True until the answer (or a failure) was received.
    pub(crate) fn is_waiting(&self) -> bool {
        self.rx.is_some()
    }

    #[cfg(feature = "client")]
    /// Stops waiting; true when the request was still unanswered (the peer may still be
    /// working on it and should be told).
    pub(crate) fn abandon(mut self) -> bool {
        self.rx = None;
        self.pending.forget(&self.id)
    }
}

impl Drop for Awaiting {
    fn drop(&mut self) {
        if self.rx.is_some() {
            self.pending.forget(&self.id);
        }
    }
}

impl std::fmt::Debug for Awaiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Awaiting").field("id", &self.id).finish()
    }
}

/// Requests the peer sent that are running here, by id, each with a tag `T`: a cancellation
/// aborts one, the end of a connection aborts those that must not outlive it. The server keeps
/// one per connection (stdio, in memory) and per 2025 HTTP session; the client's HTTP transport
/// keeps its 2026 requests in one, to close a response when the client gives up.
pub(crate) struct RunningRequests<T = ()> {
    map: Mutex<HashMap<RequestId, (AbortHandle, T)>>,
}

impl<T> Default for RunningRequests<T> {
    fn default() -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> RunningRequests<T> {
    fn map(&self) -> MutexGuard<'_, HashMap<RequestId, (AbortHandle, T)>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts the request `id` with `spawn` and records it; false (and nothing spawned) when
    /// the id is already running. The entry exists before the task can run to its end, so the
    /// task's own [`finish`](Self::finish) never races ahead of it. An entry whose task ended
    /// without calling `finish` (it panicked outside the handler's guard) is not running: it is
    /// replaced, so its id is not refused for the rest of the connection.
    pub(crate) fn start(&self, id: RequestId, tag: T, spawn: impl FnOnce() -> AbortHandle) -> bool {
        let mut map = self.map();
        if map
            .get(&id)
            .is_some_and(|(running, _)| !running.is_finished())
        {
            return false;
        }
        let abort = spawn();
        map.insert(id, (abort, tag));
        true
    }

    /// Records a request already started (replacing an entry of the same id).
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // HTTP's requests start elsewhere
    pub(crate) fn insert(&self, id: RequestId, abort: AbortHandle, tag: T) {
        let mut map = self.map();
        map.retain(|_, (running, _)| !running.is_finished());
        if !abort.is_finished() {
            map.insert(id, (abort, tag));
        }
    }

    /// Forgets the request `id`, which ended by itself.
    pub(crate) fn finish(&self, id: &RequestId) {
        self.map().remove(id);
    }

    /// Aborts the request `id`; false when it is not running (unknown, or already done).
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        match self.map().remove(id) {
            Some((abort, _)) => {
                abort.abort();
                true
            }
            None => false,
        }
    }

    /// Aborts every request whose tag matches.
    pub(crate) fn cancel_where(&self, matches: impl Fn(&T) -> bool) {
        self.map().retain(|_, (abort, tag)| {
            let cancel = matches(tag);
            if cancel {
                abort.abort();
            }
            !cancel
        });
    }
}

#[cfg(test)]
mod tests {
    use super::RunningRequests;
    use crate::jsonrpc::RequestId;

    #[tokio::test]
    async fn an_id_whose_task_ended_without_finishing_is_free_again() {
        let running = RunningRequests::<()>::default();
        let id = RequestId::Number(7);
        let mut ended = None;
        assert!(running.start(id.clone(), (), || {
            let task = tokio::spawn(async { panic!("outside the handler's guard") });
            let abort = task.abort_handle();
            ended = Some(task);
            abort
        }));
        // The task is over (it panicked) and never called `finish`.
        let ended = ended.expect("spawned");
        assert!(ended.await.is_err_and(|e| e.is_panic()));
        assert!(running.start(id.clone(), (), || {
            tokio::spawn(std::future::pending::<()>()).abort_handle()
        }));
        // A task that is still running keeps its id.
        assert!(!running.start(id.clone(), (), || unreachable!("already running")));
        assert!(running.cancel(&id));
        assert!(!running.cancel(&id));
    }
}
