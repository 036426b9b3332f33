//! The client's connection: one writer, one reader task, pending requests matched by id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::builder::ClientBuilder;
use crate::era::{Era, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use crate::error::McpError;
use crate::jsonrpc::{self, Message, RequestId, ResponseWaiter};
use crate::serve::IntoServer;
use crate::server::SchemaValidator;
use crate::transport::lines::{Frame, LineReader};
use crate::types::{InitializeRequestParams, InitializeResult};

/// Notifications kept for [`Client::next_notification`] before older ones are dropped.
const NOTIFICATION_BUFFER: usize = 4096;

type Pending = Arc<Mutex<HashMap<RequestId, ResponseWaiter>>>;

/// A notification the server sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerNotification {
    /// The method, e.g. `notifications/progress`.
    pub method: String,
    /// Its params (`Value::Null` when absent).
    pub params: Value,
}

/// An MCP client connected to an in-process server.
pub struct Client {
    config: ClientBuilder,
    out: mpsc::Sender<String>,
    pending: Pending,
    next_id: AtomicI64,
    notifications: tokio::sync::Mutex<mpsc::Receiver<ServerNotification>>,
    initialize: Option<InitializeResult>,
    /// Output-schema validators of the tools seen in `tools/list` (`None`: no output schema).
    pub(crate) output_schemas: Mutex<HashMap<String, Option<Arc<SchemaValidator>>>>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
    server: JoinHandle<()>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("protocol_version", &self.config.protocol_version)
            .finish()
    }
}

impl Client {
    /// Connects to `server` with the default settings (2026-07-28).
    pub async fn connect(server: impl IntoServer) -> Result<Self, McpError> {
        Self::builder().connect(server).await
    }

    /// A builder to choose the era, identity, capabilities and error switch.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    pub(crate) async fn start(
        config: ClientBuilder,
        server: impl IntoServer,
    ) -> Result<Self, McpError> {
        let (end, server_task) =
            crate::transport::start_memory(server, config.raise_exceptions).await?;
        let (read_half, mut write_half) = tokio::io::split(end);
        let (out, mut out_rx) = mpsc::channel::<String>(1024);
        let writer = tokio::spawn(async move {
            while let Some(line) = out_rx.recv().await {
                let mut bytes = line.into_bytes();
                bytes.push(b'\n');
                if write_half.write_all(&bytes).await.is_err() {
                    break;
                }
            }
            let _ = write_half.shutdown().await;
        });
        let pending: Pending = Arc::default();
        let (note_tx, note_rx) = mpsc::channel(NOTIFICATION_BUFFER);
        let reader = tokio::spawn(read_loop(
            read_half,
            pending.clone(),
            note_tx,
            out.downgrade(),
            config.input.clone(),
        ));
        let mut client = Self {
            config,
            out,
            pending,
            next_id: AtomicI64::new(1),
            notifications: tokio::sync::Mutex::new(note_rx),
            initialize: None,
            output_schemas: Mutex::new(HashMap::new()),
            reader,
            writer,
            server: server_task,
        };
        if client.era() == Era::Legacy {
            client.handshake().await?;
        }
        Ok(client)
    }

    async fn handshake(&mut self) -> Result<(), McpError> {
        let params = InitializeRequestParams {
            protocol_version: self.config.protocol_version.clone(),
            capabilities: self.config.capabilities.clone(),
            client_info: self.config.client_info.clone(),
            meta: None,
        };
        let result: InitializeResult = self
            .send_request("initialize", serde_json::to_value(params)?)
            .await
            .and_then(|raw| Ok(serde_json::from_str(raw.get())?))?;
        self.initialize = Some(result);
        self.notify("notifications/initialized", Value::Null).await
    }

    /// The era this client speaks.
    pub fn era(&self) -> Era {
        self.config.era()
    }

    /// The protocol version: the negotiated one (2025) or the configured one (2026).
    pub fn protocol_version(&self) -> &str {
        match &self.initialize {
            Some(init) => &init.protocol_version,
            None => &self.config.protocol_version,
        }
    }

    /// The server's `initialize` answer (2025 only).
    pub fn initialize_result(&self) -> Option<&InitializeResult> {
        self.initialize.as_ref()
    }

    /// Sends request `method` with `params` (an object, or `Value::Null` for none) and returns
    /// the raw result. On 2026 the client's `_meta` envelope is added to the params.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, McpError> {
        let raw = self
            .send_request(method, self.with_envelope(params))
            .await?;
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
        let mut params = self.with_envelope(serde_json::to_value(params)?);
        let mut rounds = 0;
        loop {
            let raw = self.send_request(method, params.clone()).await?;
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
            let responses = self.config.input.answer_all(&requests).await?;
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
        let params = (!params.is_null()).then_some(&params);
        let line = jsonrpc::encode_notification(method, params);
        self.out
            .send(line)
            .await
            .map_err(|_| McpError::internal("the connection is closed"))
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

    /// Closes the connection and waits until the server finished its in-flight requests and
    /// exited its lifespan.
    pub async fn close(self) {
        drop(self.out);
        let _ = self.writer.await;
        let _ = self.server.await;
        let _ = self.reader.await;
    }

    fn with_envelope(&self, params: Value) -> Value {
        if self.era() == Era::Legacy {
            return params;
        }
        let mut map = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let meta = map
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.entry(META_PROTOCOL_VERSION)
                .or_insert_with(|| Value::from(self.config.protocol_version.as_str()));
            meta.entry(META_CLIENT_CAPABILITIES).or_insert_with(|| {
                serde_json::to_value(&self.config.capabilities).unwrap_or_default()
            });
            meta.entry(META_CLIENT_INFO).or_insert_with(|| {
                serde_json::to_value(&self.config.client_info).unwrap_or_default()
            });
        }
        Value::Object(map)
    }

    async fn send_request(&self, method: &str, params: Value) -> Result<Box<RawValue>, McpError> {
        self.begin(method, params).await?.raw().await
    }

    async fn begin(&self, method: &str, params: Value) -> Result<PendingRequest, McpError> {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), tx);
        let params = (!params.is_null()).then_some(&params);
        let line = jsonrpc::encode_request(&id, method, params);
        if self.out.send(line).await.is_err() {
            return Err(McpError::internal("the connection is closed"));
        }
        Ok(PendingRequest { id, rx })
    }

    /// Sends request `method` (with the era's envelope) and returns at once; await
    /// [`PendingRequest::response`] for the answer, or [`cancel`](Self::cancel) it.
    pub async fn start_request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<PendingRequest, McpError> {
        self.begin(method, self.with_envelope(params)).await
    }

    /// Sends `notifications/cancelled` for request `id`: the server aborts its handler and never
    /// answers; the pending request resolves to an error.
    pub async fn cancel(&self, id: &RequestId, reason: Option<&str>) -> Result<(), McpError> {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        let mut params = Map::new();
        params.insert("requestId".into(), id.to_value());
        if let Some(reason) = reason {
            params.insert("reason".into(), Value::from(reason));
        }
        self.notify("notifications/cancelled", Value::Object(params))
            .await
    }
}

/// A request sent by [`Client::start_request`], not answered yet.
pub struct PendingRequest {
    id: RequestId,
    rx: oneshot::Receiver<Result<Box<RawValue>, crate::jsonrpc::ErrorObject>>,
}

impl PendingRequest {
    /// Its JSON-RPC id (what [`Client::cancel`] takes).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    async fn raw(self) -> Result<Box<RawValue>, McpError> {
        match self.rx.await {
            Ok(Ok(raw)) => Ok(raw),
            Ok(Err(e)) => Err(McpError::from_wire(e)),
            Err(_) => Err(McpError::internal(
                "no answer: the request was cancelled or the server closed the connection",
            )),
        }
    }

    /// The result (or the server's error).
    pub async fn response(self) -> Result<Value, McpError> {
        let raw = self.raw().await?;
        Ok(serde_json::from_str(raw.get())?)
    }
}

async fn read_loop(
    read_half: ReadHalf<DuplexStream>,
    pending: Pending,
    notes: mpsc::Sender<ServerNotification>,
    out: mpsc::WeakSender<String>,
    input: super::input::InputHandlers,
) {
    let mut lines = LineReader::new(read_half, usize::MAX);
    while let Ok(Some(frame)) = lines.next().await {
        let Frame::Line(bytes) = frame else { continue };
        match jsonrpc::decode(&bytes) {
            Ok(Message::Response { id, outcome }) => {
                let waiter = pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&id);
                if let Some(tx) = waiter {
                    let _ = tx.send(outcome);
                }
            }
            Ok(Message::Notification { method, params }) => {
                let params = params
                    .and_then(|raw| serde_json::from_str(raw.get()).ok())
                    .unwrap_or(Value::Null);
                if notes
                    .try_send(ServerNotification { method, params })
                    .is_err()
                {
                    tracing::warn!("client notification buffer full; notification dropped");
                }
            }
            Ok(Message::Request { id, method, params }) => {
                if method == "ping" {
                    // A weak handle: the client's own sender going away closes the pipe.
                    if let Some(out) = out.upgrade() {
                        let line = jsonrpc::encode_result(&id, &Value::Object(Map::new()));
                        let _ = out.send(line).await;
                    }
                    continue;
                }
                let params = params
                    .and_then(|raw| serde_json::from_str(raw.get()).ok())
                    .unwrap_or(Value::Object(Map::new()));
                let (input, out) = (input.clone(), out.clone());
                // Answered in its own task: the callback may take a while (a person typing)
                // and responses must keep flowing meanwhile. The task holds only a weak handle
                // until it has an answer, so a pending callback never keeps `close` waiting.
                tokio::spawn(async move {
                    let line = match input.answer(&method, params).await {
                        Ok(result) => jsonrpc::encode_result(&id, &result),
                        Err(e) => jsonrpc::encode_error(Some(&id), &e.to_wire(false)),
                    };
                    if let Some(out) = out.upgrade() {
                        let _ = out.send(line).await;
                    }
                });
            }
            Err(e) => tracing::warn!(error = %e.error, "client received an undecodable message"),
        }
    }
    // The server is gone: wake every waiter with an error.
    pending.lock().unwrap_or_else(|p| p.into_inner()).clear();
}
