//! The [`Client`]: its parts, how it starts (transport task, reader task, era negotiation),
//! what negotiation found, and how it closes. Requests go out in `request.rs`; what the server
//! sends is routed in `reader.rs`.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::builder::ClientBuilder;
use super::cache::ResultCache;
use super::notify::ServerNotification;
use super::options::RequestOptions;
use super::shared::{Negotiated, Shared};
use crate::era::Era;
use crate::error::McpError;
use crate::jsonrpc;
use crate::peer::PendingRequests;
use crate::transport::{Outgoing, OutgoingKind, Transport, Wire};
use crate::types::{
    DiscoverResult, Implementation, InitializeResult, ParamHeaders, ServerCapabilities,
};
use crate::validator::SchemaValidator;

/// Notifications kept for [`Client::next_notification`] before new ones are dropped.
const NOTIFICATION_BUFFER: usize = 4096;
/// Messages queued for the transport before a request waits.
const OUTGOING_CAPACITY: usize = 1024;
/// How long [`Client::close`] waits for the transport to shut down (the stdio transport's own
/// close sequence takes at most its close and terminate timeouts, 7 s by default).
const CLOSE_WAIT: Duration = Duration::from_secs(30);

/// An MCP client: connected to one server over any transport, in the era negotiated on
/// connect.
///
/// Every method takes `&self`: share one client between tasks behind an `Arc`, and requests
/// run concurrently. [`close`](Self::close) shuts the transport down and waits for it; dropping
/// the last handle does the same in the background (a child process is killed if the runtime
/// itself goes away first).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use modelctx_core::client::Client;
/// use modelctx_core::era::Era;
/// use modelctx_core::lowlevel::Server;
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
    pub(super) out: mpsc::Sender<Outgoing>,
    pub(crate) shared: Arc<Shared>,
    pub(super) next_token: AtomicU64,
    pub(super) carries_headers: bool,
    /// The 2026 envelope's capabilities and client info, encoded once.
    pub(super) envelope: (Value, Value),
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
        let reader = tokio::spawn(super::reader::read_loop(
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
}
