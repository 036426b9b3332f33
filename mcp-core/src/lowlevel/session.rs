//! [`Session`]: one client's conversation with the server.
//!
//! What a session is depends on the era:
//! - **2025-11-25**: the handshake's scope. On stdio and in-memory it is the connection, from
//!   `initialize` until the pipe closes; over HTTP it is what `Mcp-Session-Id`
//!   names. Its client info, capabilities and log level are fixed by `initialize` and
//!   `logging/setLevel`.
//! - **2026-07-28**: the protocol has no sessions. On stdio and in memory this SDK's session is
//!   the connection (the first 2026 request opens it; its client info and capabilities are that
//!   request's). A 2026 request over HTTP belongs to no session
//!   ([`RequestContext::session`](crate::lowlevel::RequestContext::session) is `None`, no hooks
//!   run). Each request's own `_meta` is on the
//!   [`RequestContext`](crate::lowlevel::RequestContext).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;
use serde_json::value::RawValue;

use crate::era::Era;
use crate::error::ErrorObject;
use crate::error::McpError;
use crate::jsonrpc::{self, RequestId};
use crate::peer::PendingRequests;
use crate::types::{ClientCapabilities, Implementation, LoggingLevel};

/// A handle to one session; cheap to clone, compared by identity.
#[derive(Clone)]
pub struct Session {
    inner: Arc<SessionInner>,
}

struct SessionInner {
    id: Arc<str>,
    outbound: super::Sink,
    state: Mutex<SessionState>,
    closed: AtomicBool,
    connected: AtomicBool,
    /// Server-to-client requests waiting for the client's answer (ids `s-1`, `s-2`, ...).
    pending: Arc<PendingRequests>,
    /// This session's handlers still running, cancelled ones cleaning up included, and a
    /// wake-up for whoever waits for the last one (the close hooks run after them).
    work: AtomicUsize,
    idle: tokio::sync::Notify,
}

#[derive(Default)]
struct SessionState {
    era: Option<Era>,
    protocol_version: Option<Arc<str>>,
    client_info: Option<Arc<Implementation>>,
    client_capabilities: Arc<ClientCapabilities>,
    log_level: Option<LoggingLevel>,
    initialized: bool,
    initialized_notified: bool,
    /// 2025 `resources/subscribe`d URIs (kept so an HTTP session store can carry them).
    subscriptions: std::collections::BTreeSet<String>,
}

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.inner.id)
            .field("era", &self.era())
            .finish()
    }
}

impl PartialEq for Session {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for Session {}

impl Session {
    pub(crate) fn new(kind: &str, outbound: super::Sink) -> Self {
        let n = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
        Self::with_id(format!("{kind}-{n}").into(), outbound)
    }

    pub(crate) fn with_id(id: Arc<str>, outbound: super::Sink) -> Self {
        Self {
            inner: Arc::new(SessionInner {
                id,
                outbound,
                state: Mutex::new(SessionState::default()),
                closed: AtomicBool::new(false),
                connected: AtomicBool::new(false),
                pending: PendingRequests::new(Some("s-")),
                work: AtomicUsize::new(0),
                idle: tokio::sync::Notify::new(),
            }),
        }
    }

    /// Counts a handler of this session as running (or, cancelled, cleaning up) until the
    /// returned guard is dropped.
    pub(crate) fn work_started(&self) -> WorkGuard {
        self.inner.work.fetch_add(1, Ordering::AcqRel);
        WorkGuard(self.clone())
    }

    /// Whether a handler of this session is still running or cleaning up.
    pub(crate) fn busy(&self) -> bool {
        self.inner.work.load(Ordering::Acquire) > 0
    }

    /// Waits until no handler of this session runs or cleans up any more.
    pub(crate) async fn idle(&self) {
        loop {
            let woken = self.inner.idle.notified();
            let mut woken = std::pin::pin!(woken);
            woken.as_mut().enable();
            if !self.busy() {
                return;
            }
            woken.await;
        }
    }

    fn state(&self) -> MutexGuard<'_, SessionState> {
        // A poisoned lock only means a panic happened while holding it; the state is plain data.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The session id (`stdio-3`, `memory-7`, or the HTTP `Mcp-Session-Id`).
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The era the session opened in (`None` until its first era-defining message).
    pub fn era(&self) -> Option<Era> {
        self.state().era
    }

    /// The protocol version negotiated by `initialize`, or of the request that opened the session.
    pub fn protocol_version(&self) -> Option<Arc<str>> {
        self.state().protocol_version.clone()
    }

    /// Who the client says it is.
    pub fn client_info(&self) -> Option<Arc<Implementation>> {
        self.state().client_info.clone()
    }

    /// What the client declared it can do.
    pub fn client_capabilities(&self) -> Arc<ClientCapabilities> {
        self.state().client_capabilities.clone()
    }

    /// The level set by `logging/setLevel` (2025).
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.state().log_level
    }

    /// True once `initialize` was answered (2025).
    pub fn is_initialized(&self) -> bool {
        self.state().initialized
    }

    /// True once the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }

    pub(crate) fn open(
        &self,
        era: Era,
        version: &Arc<str>,
        client_info: Option<&Arc<Implementation>>,
        client_capabilities: &Arc<ClientCapabilities>,
    ) -> bool {
        let mut st = self.state();
        let first = st.era.is_none();
        // (Taken by reference: every 2026 request opens its connection, only the first one
        // keeps anything.)
        if first || era == Era::Legacy {
            st.era = Some(era);
            st.protocol_version = Some(version.clone());
            st.client_info = client_info.cloned();
            st.client_capabilities = client_capabilities.clone();
        }
        if era == Era::Legacy {
            st.initialized = true;
        }
        first
    }

    /// Marks the session connected; true the first time only (its `on_connect` hooks run then).
    pub(crate) fn begin(&self) -> bool {
        !self.inner.connected.swap(true, Ordering::AcqRel)
    }

    /// True once the session's `on_connect` hooks ran.
    pub(crate) fn was_connected(&self) -> bool {
        self.inner.connected.load(Ordering::Acquire)
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.state().log_level = Some(level);
    }

    /// Notes that the client subscribed to (`on`) or unsubscribed from `uri`.
    pub(crate) fn set_subscribed(&self, uri: &str, on: bool) {
        let mut st = self.state();
        if on {
            st.subscriptions.insert(uri.to_owned());
        } else {
            st.subscriptions.remove(uri);
        }
    }

    /// Whether the client is subscribed to `uri` (2025 `resources/subscribe`).
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.state().subscriptions.contains(uri)
    }

    /// The URIs the client is subscribed to (2025 `resources/subscribe`), sorted.
    #[cfg(feature = "http")]
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        self.state().subscriptions.iter().cloned().collect()
    }

    /// Gives a 2025 session rebuilt from a session store what its handshake had set.
    #[cfg(feature = "http")]
    pub(crate) fn restore(
        &self,
        version: Arc<str>,
        client_info: Option<Arc<Implementation>>,
        client_capabilities: Arc<ClientCapabilities>,
        log_level: Option<LoggingLevel>,
        subscriptions: Vec<String>,
        ready: bool,
    ) {
        self.open(
            Era::Legacy,
            &version,
            client_info.as_ref(),
            &client_capabilities,
        );
        let mut st = self.state();
        st.log_level = log_level;
        st.subscriptions = subscriptions.into_iter().collect();
        st.initialized_notified = ready;
    }

    /// Takes what a session store holds of a 2025 session this process already serves, in
    /// one step under the session's lock: `merge` gets the log level and subscriptions held
    /// now and returns the ones to keep, so a change made meanwhile here (a
    /// `resources/subscribe`) is never overwritten by an older copy. Readiness only turns on.
    #[cfg(feature = "http")]
    pub(crate) fn merge_stored(
        &self,
        version: Arc<str>,
        ready: bool,
        merge: impl FnOnce(
            Option<LoggingLevel>,
            &std::collections::BTreeSet<String>,
        ) -> (Option<LoggingLevel>, std::collections::BTreeSet<String>),
    ) {
        let mut st = self.state();
        st.era = Some(Era::Legacy);
        st.protocol_version = Some(version);
        st.initialized = true;
        let (level, subscriptions) = merge(st.log_level, &st.subscriptions);
        st.log_level = level;
        st.subscriptions = subscriptions;
        st.initialized_notified |= ready;
    }

    pub(crate) fn mark_initialized_notified(&self) {
        self.state().initialized_notified = true;
    }

    /// True once the client sent `notifications/initialized` (2025).
    pub fn client_ready(&self) -> bool {
        self.state().initialized_notified
    }

    pub(crate) fn mark_closed(&self) {
        self.inner.closed.store(true, Ordering::Release);
        self.inner
            .pending
            .close("the session closed before the client answered");
    }

    /// Sends a notification to this session's client (list changes, resource updates); 2025
    /// sessions only.
    ///
    /// On the 2026 wire a server sends notifications only on a request's own stream; use the
    /// request's [`RequestContext`](crate::lowlevel::RequestContext) there.
    pub async fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<(), McpError> {
        self.require_legacy("notifications outside a request")?;
        let params = serde_json::to_value(params)?;
        let line = jsonrpc::encode_notification(method, Some(&params));
        self.inner
            .outbound
            .send(super::Outbound::Message(line))
            .await
            .map_err(|_| McpError::internal("the session is closed"))
    }

    /// The session-level stream (stdio: the connection; HTTP 2025: the standalone GET stream).
    #[cfg(feature = "http")]
    pub(crate) fn outbound_sender(&self) -> super::Sink {
        self.inner.outbound.clone()
    }

    /// Queues a notification without waiting (for announcements made outside any task); false
    /// when it could not be queued (a 2026 session, a closed or saturated connection).
    pub(crate) fn try_notify(&self, method: &str, params: serde_json::Value) -> bool {
        if self.era() != Some(Era::Legacy) {
            return false;
        }
        let line = jsonrpc::encode_notification(method, Some(&params));
        self.inner
            .outbound
            .try_send(super::Outbound::Message(line))
            .is_ok()
    }

    /// Sends a request to the client on the session's own stream (stdio: the connection; HTTP
    /// 2025: the standalone `GET` stream) and waits for its answer (2025 server-to-client
    /// requests: `roots/list`, `sampling/createMessage`, `elicitation/create`, `ping`). This is
    /// for code outside any request (a connect hook, a background task); inside a handler use
    /// [`RequestContext::request`](super::RequestContext::request), which asks on that
    /// request's stream and stops when the request is cancelled. Fails on a session that is
    /// not a 2025 one, and when the connection closes before the answer.
    pub async fn request<P: Serialize, R: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: P,
    ) -> Result<R, McpError> {
        self.require_legacy("server-to-client requests")?;
        let outbound = self.inner.outbound.clone();
        self.request_via(&outbound, method, params).await
    }

    /// Sends a request on `stream` (a request's own stream, or the session's) and waits for the
    /// client's answer, which arrives through [`resolve`](Self::resolve).
    pub(crate) async fn request_via<P: Serialize, R: serde::de::DeserializeOwned>(
        &self,
        stream: &super::Sink,
        method: &str,
        params: P,
    ) -> Result<R, McpError> {
        if self.is_closed() {
            return Err(McpError::internal("the session is closed"));
        }
        let params = serde_json::to_value(params)?;
        // Forgotten however the wait ends (answer, cancellation, timeout).
        let mut waiting = self.inner.pending.register()?;
        let line = jsonrpc::encode_request(waiting.id(), method, Some(&params));
        if stream.send(super::Outbound::Message(line)).await.is_err() {
            return Err(McpError::internal("the session is closed"));
        }
        let raw = waiting.wait().await?;
        Ok(serde_json::from_str(raw.get())?)
    }

    /// The 2026 wire has neither server-to-client requests nor notifications outside a request.
    fn require_legacy(&self, what: &str) -> Result<(), McpError> {
        match self.era() {
            Some(Era::Legacy) => Ok(()),
            _ => Err(McpError::internal(format!(
                "{what} exist only in a 2025 session (initialize); this session is not one"
            ))),
        }
    }

    /// Routes a client's response to the request that waits for it; false if none waits.
    pub(crate) fn resolve(
        &self,
        id: &RequestId,
        outcome: Result<Box<RawValue>, ErrorObject>,
    ) -> bool {
        self.inner.pending.resolve(id, outcome)
    }
}

/// A handler of the session at work (see [`Session::work_started`]).
pub(crate) struct WorkGuard(Session);

impl Drop for WorkGuard {
    fn drop(&mut self) {
        if self.0.inner.work.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.inner.idle.notify_waiters();
        }
    }
}
