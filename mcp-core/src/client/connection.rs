//! The client's connection: requests out through the transport, answers matched by id in the
//! shared [`PendingRequests`], the server's notifications and requests routed by one reader
//! task.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;

use super::builder::ClientBuilder;
use super::cache::ResultCache;
use super::input::InputHandlers;
use super::notify::{NotificationHandlers, ServerNotification};
use super::options::{ProgressCallback, RequestOptions};
use crate::era::{Era, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use crate::error::McpError;
use crate::jsonrpc::{self, Message, RequestId};
use crate::peer::{Awaiting, PendingRequests};
use crate::server::SchemaValidator;
use crate::transport::{Incoming, Outgoing, OutgoingKind, Transport, Wire};
use crate::types::{
    DiscoverResult, Implementation, InitializeResult, ParamHeaders, ServerCapabilities,
};

/// Notifications kept for [`Client::next_notification`] before new ones are dropped.
const NOTIFICATION_BUFFER: usize = 4096;
/// Messages queued for the transport before a request waits.
const OUTGOING_CAPACITY: usize = 1024;
/// How long [`Client::close`] waits for the transport to shut down (the stdio transport's own
/// close sequence takes at most its close and terminate timeouts, 7 s by default).
const CLOSE_WAIT: Duration = Duration::from_secs(30);

/// What era negotiation settled.
#[derive(Debug, Clone)]
pub(crate) struct Negotiated {
    pub(crate) era: Era,
    pub(crate) version: Arc<str>,
    pub(crate) initialize: Option<Arc<InitializeResult>>,
    pub(crate) discover: Option<Arc<DiscoverResult>>,
}

/// What the reader task and the request paths share.
pub(crate) struct Shared {
    pub(crate) pending: Arc<PendingRequests>,
    pub(crate) negotiated: RwLock<Negotiated>,
    progress: Mutex<HashMap<String, (ProgressCallback, Arc<Notify>)>>,
    handlers: NotificationHandlers,
    input: InputHandlers,
    cache: Option<ResultCache>,
}

/// An MCP client: connected to one server over any transport, in the era negotiated on
/// connect.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use mcp_core::client::Client;
/// use mcp_core::era::Era;
/// use mcp_core::lowlevel::Server;
///
/// // A server of this process, reached in memory; `ChildProcess` and `HttpClientTransport`
/// // reach others the same way.
/// let client = Client::connect(Server::new("empty")).await.unwrap();
/// assert_eq!(client.era(), Era::Modern);
/// assert_eq!(client.server_info().unwrap().name, "empty");
/// client.close().await;
/// # });
/// ```
pub struct Client {
    pub(crate) config: ClientBuilder,
    out: mpsc::Sender<Outgoing>,
    pub(crate) shared: Arc<Shared>,
    next_token: AtomicU64,
    carries_headers: bool,
    /// The 2026 envelope's capabilities and client info, encoded once.
    envelope: (Value, Value),
    notifications: tokio::sync::Mutex<mpsc::Receiver<ServerNotification>>,
    /// Output-schema validators of the tools seen in `tools/list` (`None`: no output schema).
    pub(crate) output_schemas: Mutex<HashMap<String, Option<Arc<SchemaValidator>>>>,
    /// `x-mcp-header` arguments of the tools seen in `tools/list`.
    pub(crate) param_headers: Mutex<HashMap<String, ParamHeaders>>,
    transport: JoinHandle<()>,
    reader: JoinHandle<()>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let negotiated = self.negotiated();
        f.debug_struct("Client")
            .field("era", &negotiated.era)
            .field("protocol_version", &negotiated.version)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects with the default settings (era negotiated) through `transport` (a server of
    /// this process, a [`ChildProcess`](crate::transport::ChildProcess), an
    /// [`HttpClientTransport`](crate::transport::HttpClientTransport), ...).
    pub async fn connect(transport: impl super::IntoTransport) -> Result<Self, McpError> {
        Self::builder().connect(transport).await
    }

    /// A builder to choose the era, identity, capabilities, callbacks and timeouts.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    pub(crate) async fn start(
        config: ClientBuilder,
        transport: impl Transport,
    ) -> Result<Self, McpError> {
        let (out, outgoing) = mpsc::channel(OUTGOING_CAPACITY);
        let (incoming_tx, incoming) = mpsc::channel(OUTGOING_CAPACITY);
        let carries_headers = transport.carries_headers();
        let transport = tokio::spawn(transport.run(Wire {
            outgoing,
            incoming: incoming_tx,
        }));
        let (version, era) = match &config.era {
            super::EraChoice::Pinned(v) => {
                (Arc::from(v.as_str()), config.era().unwrap_or(Era::Modern))
            }
            super::EraChoice::Auto => (Arc::from(crate::era::LATEST_PROTOCOL_VERSION), Era::Modern),
        };
        let shared = Arc::new(Shared {
            pending: PendingRequests::new(None),
            negotiated: RwLock::new(Negotiated {
                era,
                version,
                initialize: None,
                discover: None,
            }),
            progress: Mutex::new(HashMap::new()),
            handlers: config.notifications.clone(),
            input: config.input.clone(),
            cache: config.cache.then(ResultCache::default),
        });
        let (note_tx, note_rx) = mpsc::channel(NOTIFICATION_BUFFER);
        let reader = tokio::spawn(read_loop(
            shared.clone(),
            incoming,
            note_tx,
            out.downgrade(),
        ));
        let envelope = (
            serde_json::to_value(&config.capabilities)?,
            serde_json::to_value(&config.client_info)?,
        );
        let client = Self {
            envelope,
            config,
            out,
            shared,
            next_token: AtomicU64::new(1),
            carries_headers,
            notifications: tokio::sync::Mutex::new(note_rx),
            output_schemas: Mutex::new(HashMap::new()),
            param_headers: Mutex::new(HashMap::new()),
            transport,
            reader,
        };
        if let Err(e) = super::negotiate::negotiate(&client).await {
            client.close().await;
            return Err(e);
        }
        Ok(client)
    }

    pub(crate) fn negotiated(&self) -> Negotiated {
        self.shared
            .negotiated
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn set_negotiated(&self, f: impl FnOnce(&mut Negotiated)) {
        f(&mut self
            .shared
            .negotiated
            .write()
            .unwrap_or_else(|p| p.into_inner()));
    }

    /// The era this client speaks (found on connect, or pinned).
    pub fn era(&self) -> Era {
        self.shared
            .negotiated
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .era
    }

    /// The protocol version spoken: the one `initialize` negotiated (2025), or the one in
    /// every request's `_meta` (2026).
    pub fn protocol_version(&self) -> String {
        self.negotiated().version.to_string()
    }

    /// The server's `initialize` answer (2025 only).
    pub fn initialize_result(&self) -> Option<InitializeResult> {
        self.negotiated()
            .initialize
            .map(|r| InitializeResult::clone(&r))
    }

    /// The server's `server/discover` answer (2026), from negotiation or the last
    /// [`discover`](Self::discover).
    pub fn discover_result(&self) -> Option<DiscoverResult> {
        self.negotiated()
            .discover
            .map(|r| DiscoverResult::clone(&r))
    }

    /// Who the server says it is: `serverInfo` of `initialize` (2025), or of the
    /// `server/discover` result's `_meta` (2026).
    pub fn server_info(&self) -> Option<Implementation> {
        let negotiated = self.negotiated();
        if let Some(init) = negotiated.initialize {
            return Some(init.server_info.clone());
        }
        let discover = negotiated.discover?;
        let info = discover.meta.as_ref()?.get(crate::era::META_SERVER_INFO)?;
        serde_json::from_value(info.clone()).ok()
    }

    /// What the server offers (`None` with a pinned 2026 version until
    /// [`discover`](Self::discover) ran).
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        let negotiated = self.negotiated();
        match negotiated.initialize {
            Some(init) => Some(init.capabilities.clone()),
            None => negotiated.discover.map(|d| d.capabilities.clone()),
        }
    }

    /// The server's instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<String> {
        let negotiated = self.negotiated();
        match negotiated.initialize {
            Some(init) => init.instructions.clone(),
            None => negotiated.discover.and_then(|d| d.instructions.clone()),
        }
    }

    /// Sends request `method` with `params` (an object, or `Value::Null` for none) and returns
    /// the raw result. On 2026 the client's `_meta` envelope is added to the params; an
    /// `input_required` result is returned as it is.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, McpError> {
        self.request_once(method, params, &RequestOptions::default())
            .await
    }

    /// [`request`](Self::request) with per-request options: one request, one answer, no
    /// input loop (what a proxy needs to pass `input_required` on).
    pub async fn request_once(
        &self,
        method: &str,
        params: Value,
        options: &RequestOptions,
    ) -> Result<Value, McpError> {
        let raw = self.send(method, &params, options).await?;
        Ok(serde_json::from_str(raw.get())?)
    }

    /// Like [`request`](Self::request), typed on both ends, and on 2026 driving the
    /// multi-round-trip loop: an `input_required` result is answered with the builder's
    /// callbacks ([`on_elicit`](super::ClientBuilder::on_elicit), ...) and the request retried
    /// with `inputResponses` and the echoed `requestState`, at most
    /// [`max_input_rounds`](super::ClientBuilder::max_input_rounds) times.
    pub async fn request_typed<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
    ) -> Result<R, McpError> {
        self.request_with(method, params, &RequestOptions::default())
            .await
    }

    /// [`request_typed`](Self::request_typed) with per-request options (timeout, progress,
    /// headers).
    pub async fn request_with<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
        options: &RequestOptions,
    ) -> Result<R, McpError> {
        self.request_value(method, serde_json::to_value(params)?, options)
            .await
    }

    /// [`request_with`](Self::request_with) for params already a JSON value.
    pub(crate) async fn request_value<R: DeserializeOwned>(
        &self,
        method: &str,
        mut params: Value,
        options: &RequestOptions,
    ) -> Result<R, McpError> {
        let mut rounds = 0;
        loop {
            let raw = self.send(method, &params, options).await?;
            if self.era() == Era::Legacy || !raw.get().contains("input_required") {
                return Ok(serde_json::from_str(raw.get())?);
            }
            let paused: Value = serde_json::from_str(raw.get())?;
            if paused.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(serde_json::from_value(paused)?);
            }
            rounds += 1;
            if rounds > self.config.max_input_rounds {
                return Err(McpError::internal(format!(
                    "{method}: the server still asked for input after {} rounds",
                    self.config.max_input_rounds
                )));
            }
            let requests = match paused.get("inputRequests") {
                Some(Value::Object(requests)) => requests.clone(),
                _ => Map::new(),
            };
            let responses = self.shared.input.answer_all(&requests).await?;
            if let Value::Object(map) = &mut params {
                map.insert("inputResponses".into(), Value::Object(responses));
                match paused.get("requestState") {
                    Some(state) => map.insert("requestState".into(), state.clone()),
                    None => map.remove("requestState"),
                };
            }
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), McpError> {
        let negotiated = self.negotiated();
        let params = (!params.is_null()).then_some(&params);
        let message = Outgoing {
            body: jsonrpc::encode_notification(method, params),
            kind: OutgoingKind::Notification,
            method: Some(method.into()),
            era: negotiated.era,
            protocol_version: self.version_header(&negotiated),
            name: None,
            headers: Vec::new(),
        };
        self.out.send(message).await.map_err(|_| self.closed())
    }

    /// The next notification the server sent (waits for one; `None` once the server is gone).
    pub async fn next_notification(&self) -> Option<ServerNotification> {
        self.notifications.lock().await.recv().await
    }

    /// Notifications already received, without waiting.
    pub async fn drain_notifications(&self) -> Vec<ServerNotification> {
        let mut rx = self.notifications.lock().await;
        let mut out = Vec::new();
        while let Ok(n) = rx.try_recv() {
            out.push(n);
        }
        out
    }

    /// Closes the connection: the transport shuts down the way its medium wants (stdio: close
    /// the server's stdin, wait, terminate, kill; HTTP: `DELETE` the 2025 session; in memory:
    /// the server finishes its in-flight requests and its lifespan) and this waits for it.
    pub async fn close(self) {
        let Self {
            out,
            transport,
            reader,
            shared,
            ..
        } = self;
        drop(out);
        if tokio::time::timeout(CLOSE_WAIT, transport).await.is_err() {
            tracing::warn!("the transport did not shut down in time");
        }
        shared.pending.close("the client closed the connection");
        let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
    }

    /// Sends request `method` (with the era's envelope) and returns at once; await
    /// [`PendingRequest::response`] for the answer, [`cancel`](Self::cancel) it, or drop it
    /// (which cancels it too).
    pub async fn start_request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<PendingRequest<'_>, McpError> {
        let (awaiting, _token) = self
            .begin(method, &params, &RequestOptions::default(), Vec::new())
            .await?;
        Ok(PendingRequest {
            inflight: InFlight::new(self, awaiting, method),
        })
    }

    /// Cancels request `id` (from [`PendingRequest::id`]): `notifications/cancelled` (on 2026
    /// HTTP the response is closed instead); the server stops its handler and the pending
    /// request resolves to an error.
    pub async fn cancel(&self, id: &RequestId, reason: Option<&str>) -> Result<(), McpError> {
        self.shared.pending.fail(
            id,
            McpError::internal(format!("request {id} was cancelled")),
        );
        let message = self.cancel_message(id, reason);
        self.out.send(message).await.map_err(|_| self.closed())
    }

    fn closed(&self) -> McpError {
        McpError::internal("the connection is closed")
    }

    fn version_header(&self, negotiated: &Negotiated) -> Option<Arc<str>> {
        // A 2025 client announces the version only once `initialize` settled it.
        match negotiated.era {
            Era::Legacy if negotiated.initialize.is_none() => None,
            _ => Some(negotiated.version.clone()),
        }
    }

    fn cancel_message(&self, id: &RequestId, reason: Option<&str>) -> Outgoing {
        let negotiated = self.negotiated();
        let mut params = Map::new();
        params.insert("requestId".into(), id.to_value());
        if let Some(reason) = reason {
            params.insert("reason".into(), Value::from(reason));
        }
        Outgoing {
            body: jsonrpc::encode_notification(
                "notifications/cancelled",
                Some(&Value::Object(params)),
            ),
            kind: OutgoingKind::Cancel(id.clone()),
            method: Some("notifications/cancelled".into()),
            era: negotiated.era,
            protocol_version: self.version_header(&negotiated),
            name: None,
            headers: Vec::new(),
        }
    }

    /// One request, one answer (no input loop): from the cache when allowed, else through the
    /// transport, with the timeout and cancellation on drop.
    pub(crate) async fn send(
        &self,
        method: &str,
        params: &Value,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, McpError> {
        let cache_key = match &self.shared.cache {
            Some(cache) if self.era() == Era::Modern && params.get("inputResponses").is_none() => {
                ResultCache::key(method, params).map(|key| (cache, key))
            }
            _ => None,
        };
        if let Some((cache, key)) = &cache_key {
            if let Some(raw) = cache.get(key) {
                return Ok(raw);
            }
        }
        let mut headers = Vec::new();
        if method == "tools/call" && self.carries_headers && self.era() == Era::Modern {
            headers = self.mirrored_headers(params).await;
        }
        let (awaiting, token) = self.begin(method, params, options, headers).await?;
        let timeout = match options.timeout {
            Some(timeout) => timeout,
            None if method == "subscriptions/listen" => None,
            None => self.config.request_timeout,
        };
        let reset = token.as_ref().and_then(|t| self.progress_reset(t));
        let inflight = InFlight::new(self, awaiting, method);
        let result = inflight.wait(timeout, reset).await;
        if let Some(token) = token {
            self.shared
                .progress
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&token);
        }
        let raw = result?;
        if let Some((cache, key)) = cache_key {
            cache.put(key, &raw);
        }
        Ok(raw)
    }

    fn progress_reset(&self, token: &str) -> Option<Arc<Notify>> {
        self.shared
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(token)
            .map(|(_, notify)| notify.clone())
    }

    /// Registers the request, adds the era's envelope and hands it to the transport.
    async fn begin(
        &self,
        method: &str,
        params: &Value,
        options: &RequestOptions,
        mut headers: Vec<(String, String)>,
    ) -> Result<(Awaiting, Option<String>), McpError> {
        let negotiated = self.negotiated();
        let empty = Value::Object(Map::new());
        let params = match params {
            Value::Object(_) => params,
            Value::Null => &empty,
            other => {
                return Err(McpError::invalid_params(format!(
                    "params must be an object, not {other}"
                )))
            }
        };
        let token = options.on_progress.as_ref().map(|callback| {
            let token = format!("p-{}", self.next_token.fetch_add(1, Ordering::Relaxed));
            self.shared
                .progress
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(token.clone(), (callback.clone(), Arc::new(Notify::new())));
            token
        });
        // The params are copied only when `_meta` must be added to (2026, or progress).
        let with_meta;
        let params = if negotiated.era == Era::Modern || token.is_some() {
            let mut map = params.as_object().cloned().unwrap_or_default();
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                if negotiated.era == Era::Modern {
                    self.add_envelope(meta, &negotiated.version);
                }
                if let Some(token) = &token {
                    meta.insert("progressToken".into(), Value::from(token.as_str()));
                }
            }
            with_meta = Value::Object(map);
            &with_meta
        } else {
            params
        };
        headers.extend(options.headers.iter().cloned());
        let name = match method {
            "tools/call" | "prompts/get" => params.get("name"),
            "resources/read" => params.get("uri"),
            _ => None,
        }
        .and_then(Value::as_str)
        .map(str::to_owned);
        let awaiting = self.shared.pending.register()?;
        let message = Outgoing {
            body: jsonrpc::encode_request(awaiting.id(), method, Some(params)),
            kind: OutgoingKind::Request(awaiting.id().clone()),
            method: Some(method.into()),
            era: negotiated.era,
            protocol_version: self.version_header(&negotiated),
            name,
            headers,
        };
        self.out.send(message).await.map_err(|_| self.closed())?;
        Ok((awaiting, token))
    }

    /// True when the transport sends per-request headers (HTTP).
    pub(crate) fn carries_headers(&self) -> bool {
        self.carries_headers
    }

    /// The `Mcp-Param-*` headers of a `tools/call`, learning the tool's annotations from
    /// `tools/list` the first time a tool is called.
    async fn mirrored_headers(&self, params: &Value) -> Vec<(String, String)> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Vec::new();
        };
        let known = |client: &Self| {
            client
                .param_headers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(name)
                .cloned()
        };
        let mirrored = match known(self) {
            Some(found) => found,
            None => {
                if let Err(e) = self.learn_tools().await {
                    tracing::debug!(error = %e, "tools/list failed; no Mcp-Param headers");
                }
                let mut map = self.param_headers.lock().unwrap_or_else(|p| p.into_inner());
                map.entry(name.to_owned()).or_default().clone()
            }
        };
        let arguments = params.get("arguments").unwrap_or(&Value::Null);
        super::param_headers::headers_for(&mirrored, arguments)
    }

    /// Lists every tool to learn their annotations (straight through the transport, not
    /// through [`send`](Self::send), which calls this).
    async fn learn_tools(&self) -> Result<(), McpError> {
        super::verbs::all_pages(|cursor| async move {
            let params = match &cursor {
                Some(c) => serde_json::json!({ "cursor": c }),
                None => serde_json::json!({}),
            };
            let options = RequestOptions::default();
            let (awaiting, _) = self
                .begin("tools/list", &params, &options, Vec::new())
                .await?;
            let raw = InFlight::new(self, awaiting, "tools/list")
                .wait(self.config.request_timeout, None)
                .await?;
            let mut page: crate::types::ListToolsResult = serde_json::from_str(raw.get())?;
            self.remember_tools(&mut page);
            Ok((Vec::<()>::new(), page.next_cursor))
        })
        .await
        .map(drop)
    }

    fn add_envelope(&self, meta: &mut Map<String, Value>, version: &str) {
        meta.entry(META_PROTOCOL_VERSION)
            .or_insert_with(|| Value::from(version));
        meta.entry(META_CLIENT_CAPABILITIES)
            .or_insert_with(|| self.envelope.0.clone());
        meta.entry(META_CLIENT_INFO)
            .or_insert_with(|| self.envelope.1.clone());
    }
}

/// A request on the wire: cancelled (on the wire) if dropped before its answer.
struct InFlight<'a> {
    client: &'a Client,
    awaiting: Option<Awaiting>,
    id: RequestId,
    method: String,
}

impl<'a> InFlight<'a> {
    fn new(client: &'a Client, awaiting: Awaiting, method: &str) -> Self {
        Self {
            client,
            id: awaiting.id().clone(),
            awaiting: Some(awaiting),
            method: method.to_owned(),
        }
    }

    async fn wait(
        mut self,
        timeout: Option<Duration>,
        reset: Option<Arc<Notify>>,
    ) -> Result<Box<RawValue>, McpError> {
        let Some(awaiting) = self.awaiting.as_mut() else {
            return Err(McpError::internal("the request was already awaited"));
        };
        let Some(limit) = timeout else {
            return awaiting.wait().await;
        };
        let expired = {
            let answer = awaiting.wait();
            tokio::pin!(answer);
            loop {
                let progressed = async {
                    match &reset {
                        Some(notify) => notify.notified().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    result = &mut answer => return result,
                    _ = progressed => continue,
                    _ = tokio::time::sleep(limit) => break limit,
                }
            }
        };
        let reason = format!("no answer within {} s", expired.as_secs_f64());
        if let Some(awaiting) = self.awaiting.take() {
            awaiting.abandon();
        }
        let message = self.client.cancel_message(&self.id, Some(&reason));
        let _ = self.client.out.try_send(message);
        Err(McpError::internal(format!(
            "{}: request timed out ({reason}); it was cancelled",
            self.method
        )))
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let Some(awaiting) = self.awaiting.take() else {
            return;
        };
        if awaiting.is_waiting() && awaiting.abandon() {
            let message = self
                .client
                .cancel_message(&self.id, Some("the client gave up"));
            let _ = self.client.out.try_send(message);
        }
    }
}

/// A request sent by [`Client::start_request`], not answered yet. Dropping it cancels the
/// request on the wire.
pub struct PendingRequest<'a> {
    inflight: InFlight<'a>,
}

impl std::fmt::Debug for PendingRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRequest")
            .field("id", &self.inflight.id)
            .field("method", &self.inflight.method)
            .finish_non_exhaustive()
    }
}

impl PendingRequest<'_> {
    /// Its JSON-RPC id (what [`Client::cancel`] takes).
    pub fn id(&self) -> &RequestId {
        &self.inflight.id
    }

    /// The result (or the server's error). No timeout: the caller decides how long to wait.
    pub async fn response(self) -> Result<Value, McpError> {
        let raw = self.inflight.wait(None, None).await?;
        Ok(serde_json::from_str(raw.get())?)
    }
}

/// Routes what the transport delivers: answers to their requests, notifications to progress
/// callbacks, handlers and the queue, the server's requests (2025) to the input callbacks.
async fn read_loop(
    shared: Arc<Shared>,
    mut incoming: mpsc::Receiver<Incoming>,
    notes: mpsc::Sender<ServerNotification>,
    out: mpsc::WeakSender<Outgoing>,
) {
    let mut reason = "the transport ended".to_owned();
    while let Some(item) = incoming.recv().await {
        match item {
            Incoming::Message(bytes) => {
                if let Err(why) = route(&shared, &bytes, &notes, &out).await {
                    // Not JSON-RPC: the stream can no longer be trusted to carry answers.
                    tracing::error!("{why}");
                    reason = why;
                    break;
                }
            }
            Incoming::Failed { id, error } => {
                shared.pending.fail(&id, error);
            }
            Incoming::Closed(why) => {
                reason = why;
                break;
            }
        }
    }
    shared.pending.close(&reason);
}

async fn route(
    shared: &Arc<Shared>,
    bytes: &[u8],
    notes: &mpsc::Sender<ServerNotification>,
    out: &mpsc::WeakSender<Outgoing>,
) -> Result<(), String> {
    let message = match jsonrpc::decode(bytes) {
        Ok(message) => message,
        Err(e) if e.id.is_some() || serde_json::from_slice::<Value>(bytes).is_ok() => {
            tracing::warn!(error = %e.error, "the server sent an invalid JSON-RPC message; ignored");
            return Ok(());
        }
        Err(_) => {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
            return Err(format!(
                "the server sent something that is not JSON-RPC: {text:?}"
            ));
        }
    };
    match message {
        Message::Response { id, outcome } => {
            shared.pending.resolve(&id, outcome);
        }
        Message::Notification { method, params } => {
            let params = params
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .unwrap_or(Value::Null);
            let note = ServerNotification { method, params };
            if note.method == "notifications/progress" {
                progress(shared, &note);
            }
            if let Some(cache) = &shared.cache {
                cache.invalidate(&note.method, &note.params);
            }
            shared.handlers.dispatch(&note);
            if notes.try_send(note).is_err() {
                tracing::debug!("client notification queue full; notification dropped");
            }
        }
        Message::Request { id, method, params } => {
            answer_server_request(shared, id, method, params, out.clone());
        }
    }
    Ok(())
}

fn progress(shared: &Shared, note: &ServerNotification) {
    let token = match note.params.get("progressToken") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => return,
    };
    let entry = shared
        .progress
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&token)
        .cloned();
    if let Some((callback, reset)) = entry {
        reset.notify_one();
        if let Ok(params) = serde_json::from_value(note.params.clone()) {
            callback(params);
        }
    }
}

/// A 2025 server-to-client request: `ping` at once, the input methods through the builder's
/// callbacks in their own task (a person may take a while to answer).
fn answer_server_request(
    shared: &Arc<Shared>,
    id: RequestId,
    method: String,
    params: Option<Box<RawValue>>,
    out: mpsc::WeakSender<Outgoing>,
) {
    let params = params
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or(Value::Object(Map::new()));
    let shared = shared.clone();
    tokio::spawn(async move {
        let outcome = if method == "ping" {
            Ok(Value::Object(Map::new()))
        } else {
            shared.input.answer(&method, params).await
        };
        let body = match outcome {
            Ok(result) => jsonrpc::encode_result(&id, &result),
            Err(e) => jsonrpc::encode_error(Some(&id), &e.to_wire(false)),
        };
        let negotiated = shared
            .negotiated
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let message = Outgoing {
            body,
            kind: OutgoingKind::Response,
            method: None,
            era: negotiated.era,
            protocol_version: Some(negotiated.version),
            name: None,
            headers: Vec::new(),
        };
        // A weak handle: a callback still running never keeps `close` waiting.
        if let Some(out) = out.upgrade() {
            let _ = out.send(message).await;
        }
    });
}
