//! The client's Streamable HTTP transport, both eras, on hyper.
//!
//! - **2026-07-28**: every request is a POST carrying `MCP-Protocol-Version`, `Mcp-Method`,
//!   `Mcp-Name` and the `Mcp-Param-*` headers the connection engine computed; the answer is JSON
//!   or an event stream; giving up on a request closes its response (the spec's cancellation).
//! - **2025-11-25**: `initialize` opens a session (`Mcp-Session-Id`, kept and sent on every later
//!   request with `MCP-Protocol-Version`); after `notifications/initialized` a standalone `GET`
//!   stream carries the server's notifications and requests; a response stream that breaks is
//!   resumed with `GET` + `Last-Event-ID` after the server's `retry`; a `404` for an expired
//!   session re-runs `initialize` and retries the request once; closing sends `DELETE`.

mod sse;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::rt::TokioExecutor;
use serde::de::IgnoredAny;
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use self::sse::SseParser;
use super::wire::{encode_header_value, Incoming, Outgoing, OutgoingKind, Transport, Wire};
use crate::era::Era;
use crate::error::McpError;
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::peer::RunningRequests;

/// How long [`HttpClientTransport`] waits for a TCP connection by default (10 s).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many times one 2025 response stream is resumed before the request fails (5).
pub const DEFAULT_MAX_RESUMPTIONS: u32 = 5;
/// The wait before resuming a stream whose server sent no `retry` (1 s).
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The longest wait a server's `retry` can impose (60 s).
const MAX_RETRY: Duration = Duration::from_secs(60);
/// How long opening the standalone 2025 stream may hold back the messages after
/// `notifications/initialized` (5 s).
const STANDALONE_WAIT: Duration = Duration::from_secs(5);
/// The largest JSON body read (64 MiB).
const MAX_BODY: usize = 64 * 1024 * 1024;

const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const LAST_EVENT_ID: &str = "last-event-id";

/// Streamable HTTP to one MCP endpoint (`http://host:port/path`), in the era the client speaks.
///
/// Defaults: connect timeout 10 s, no extra headers, a broken 2025 response stream resumed at
/// most 5 times (waiting the server's `retry`, 1 s when it sent none, at most 60 s).
/// `https://` needs the `https` feature (rustls with the ring provider; Mozilla's root
/// certificates unless `tls_config` gives others).
///
/// ```no_run
/// # async fn run() -> mcp_core::Result<()> {
/// use mcp_core::client::Client;
/// use mcp_core::transport::HttpClientTransport;
///
/// let http = HttpClientTransport::new("http://127.0.0.1:8080/mcp")?
///     .header("x-api-key", "secret")?;
/// let client = Client::builder().connect(http).await?;
/// println!("speaking {}", client.protocol_version());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct HttpClientTransport {
    url: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    connect_timeout: Duration,
    max_resumptions: u32,
    #[cfg(feature = "https")]
    tls: Option<Arc<rustls::ClientConfig>>,
}

#[cfg(feature = "https")]
type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "https"))]
type Connector = HttpConnector;

impl HttpClientTransport {
    /// The endpoint at `url`. Fails on a URL that is not `http://` (or, with the `https`
    /// feature, `https://`) with a host.
    pub fn new(url: &str) -> Result<Self, McpError> {
        let uri: Uri = url
            .parse()
            .map_err(|e| McpError::invalid_params(format!("invalid URL `{url}`: {e}")))?;
        match uri.scheme_str() {
            Some("http") if uri.host().is_some() => {}
            Some("https") if uri.host().is_some() && cfg!(feature = "https") => {}
            Some("https") => {
                return Err(McpError::invalid_params(format!(
                    "`{url}`: https needs the `https` feature of this crate"
                )))
            }
            _ => {
                return Err(McpError::invalid_params(format!(
                    "`{url}` is not an http:// or https:// URL with a host"
                )))
            }
        }
        Ok(Self {
            url: uri,
            headers: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_resumptions: DEFAULT_MAX_RESUMPTIONS,
            #[cfg(feature = "https")]
            tls: None,
        })
    }

    /// The TLS settings for `https://` (trusted roots, client certificates), instead of the
    /// default: Mozilla's root certificates, no client certificate.
    #[cfg(feature = "https")]
    pub fn tls_config(mut self, config: Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(config);
        self
    }

    fn connector(&self) -> Result<Connector, McpError> {
        let mut http = HttpConnector::new();
        http.set_connect_timeout(Some(self.connect_timeout));
        http.set_nodelay(true);
        #[cfg(feature = "https")]
        {
            http.enforce_http(false);
            let config = match &self.tls {
                Some(config) => rustls::ClientConfig::clone(config),
                None => default_tls()?,
            };
            Ok(hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(config)
                .https_or_http()
                .enable_http1()
                .wrap_connector(http))
        }
        #[cfg(not(feature = "https"))]
        Ok(http)
    }

    /// A header sent with every request (an API key, a tenant). Fails on a name or value HTTP
    /// does not allow.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, McpError> {
        let name = HeaderName::try_from(name)
            .map_err(|e| McpError::invalid_params(format!("invalid header name `{name}`: {e}")))?;
        let value = HeaderValue::try_from(value)
            .map_err(|e| McpError::invalid_params(format!("invalid value for `{name}`: {e}")))?;
        self.headers.push((name, value));
        Ok(self)
    }

    /// How long to wait for the TCP connection (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How many times one broken 2025 response stream is resumed (default 5).
    pub fn max_resumptions(mut self, times: u32) -> Self {
        self.max_resumptions = times;
        self
    }
}

impl Transport for HttpClientTransport {
    fn carries_headers(&self) -> bool {
        true
    }

    async fn run(self, wire: Wire) {
        let connector = match self.connector() {
            Ok(connector) => connector,
            Err(e) => {
                let _ = wire
                    .incoming
                    .send(Incoming::Closed(e.message().into_owned()))
                    .await;
                return;
            }
        };
        let hyper = Hyper::builder(TokioExecutor::new()).build(connector);
        let Wire {
            mut outgoing,
            incoming,
        } = wire;
        let conn = Arc::new(Conn {
            url: self.url,
            headers: self.headers,
            max_resumptions: self.max_resumptions,
            hyper,
            incoming,
            session: Mutex::new(Session::default()),
            reinit: tokio::sync::Mutex::new(()),
        });
        let mut tasks = JoinSet::new();
        // 2026 requests, so giving one up closes its response.
        let in_flight = RunningRequests::default();
        let mut standalone: Option<AbortHandle> = None;
        while let Some(message) = outgoing.recv().await {
            while tasks.try_join_next().is_some() {}
            match &message.kind {
                OutgoingKind::Cancel(id) if message.era == Era::Modern => {
                    // Closing the response is the cancellation; nothing is sent.
                    in_flight.cancel(id);
                }
                OutgoingKind::Request(id) if message.method.as_deref() == Some("initialize") => {
                    // Inline: nothing else is sent before the session exists.
                    conn.session().initialize = Some(message.body.clone());
                    conn.exchange(&message, id).await;
                }
                OutgoingKind::Request(id) => {
                    let (task_conn, task_id) = (conn.clone(), id.clone());
                    let modern = message.era == Era::Modern;
                    let id = id.clone();
                    let task =
                        tasks.spawn(async move { task_conn.exchange(&message, &task_id).await });
                    if modern {
                        in_flight.insert(id, task, ());
                    }
                }
                _ => {
                    let opens = message.method.as_deref() == Some("notifications/initialized");
                    if opens {
                        conn.session().initialized = Some(message.body.clone());
                    }
                    conn.post_one_way(&message).await;
                    if opens && standalone.is_none() {
                        // Nothing more is sent until the stream is open (or refused): a server
                        // may send its first requests there as soon as the session is ready.
                        let conn = conn.clone();
                        let (ready, opened) = tokio::sync::oneshot::channel();
                        standalone = Some(tasks.spawn(async move { conn.standalone(ready).await }));
                        let _ = tokio::time::timeout(STANDALONE_WAIT, opened).await;
                    }
                }
            }
        }
        tasks.abort_all();
        conn.end_session().await;
    }
}

#[derive(Default)]
struct Session {
    /// `Mcp-Session-Id` of the 2025 session, once `initialize` was answered.
    id: Option<HeaderValue>,
    /// The body of the `initialize` request, replayed when the session expires.
    initialize: Option<String>,
    /// The body of `notifications/initialized`, replayed after it.
    initialized: Option<String>,
    /// The protocol version header of the session's later requests.
    version: Option<HeaderValue>,
}

struct Conn {
    url: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    max_resumptions: u32,
    hyper: Hyper<Connector, Full<Bytes>>,
    incoming: mpsc::Sender<Incoming>,
    session: Mutex<Session>,
    /// Held while a new `initialize` replaces an expired session.
    reinit: tokio::sync::Mutex<()>,
}

/// Enough of a JSON-RPC message to tell a response to our request from the rest.
#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

/// An error body (`{"error": {...}}`), possibly without an id.
#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorObject,
}

impl Conn {
    fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn request(&self, method: Method) -> axum::http::request::Builder {
        let mut builder = Request::builder().method(method).uri(self.url.clone());
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        builder
    }

    /// A POST of `message` with the headers of its era.
    fn post(&self, message: &Outgoing, session: Option<&HeaderValue>) -> Request<Full<Bytes>> {
        let mut builder = self
            .request(Method::POST)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        if let Some(version) = &message.protocol_version {
            builder = builder.header(PROTOCOL_VERSION, &**version);
            if message.era == Era::Legacy {
                let mut st = self.session();
                if st.version.is_none() {
                    st.version = HeaderValue::try_from(&**version).ok();
                }
            }
        }
        if message.era == Era::Modern {
            if let Some(method) = &message.method {
                builder = builder.header("mcp-method", &**method);
            }
            if let Some(name) = &message.name {
                builder = builder.header("mcp-name", encode_header_value(name));
            }
        } else if let Some(session) = session {
            builder = builder.header(SESSION_ID, session);
        }
        for (name, value) in &message.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
            .body(Full::new(Bytes::from(message.body.clone())))
            .unwrap_or_else(|_| Request::new(Full::new(Bytes::new())))
    }

    async fn send(&self, request: Request<Full<Bytes>>) -> Result<Response<Body>, McpError> {
        self.hyper.request(request).await.map_err(|e| {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(inner) = source {
                text = format!("{text}: {inner}");
                source = inner.source();
            }
            McpError::internal(format!("could not reach {}: {text}", self.url))
        })
    }

    /// Sends a notification or a response; logs what the server refuses.
    async fn post_one_way(&self, message: &Outgoing) {
        let session = self.session().id.clone();
        let request = self.post(message, session.as_ref());
        match self.send(request).await {
            Ok(response) if response.status().is_success() => {}
            Ok(response) => tracing::warn!(
                status = %response.status(),
                method = message.method.as_deref().unwrap_or("response"),
                "the server refused a message"
            ),
            Err(e) => tracing::warn!(error = %e, "could not send a message"),
        }
    }

    /// Sends request `id` and delivers everything that comes back for it.
    async fn exchange(&self, message: &Outgoing, id: &RequestId) {
        if let Err(error) = self.exchange_inner(message, id).await {
            let _ = self
                .incoming
                .send(Incoming::Failed {
                    id: id.clone(),
                    error,
                })
                .await;
        }
    }

    async fn exchange_inner(&self, message: &Outgoing, id: &RequestId) -> Result<(), McpError> {
        let is_initialize = message.method.as_deref() == Some("initialize");
        let mut retried = false;
        loop {
            let session = self.session().id.clone();
            let request = self.post(message, session.as_ref());
            let response = self.send(request).await?;
            let status = response.status();
            if status == StatusCode::NOT_FOUND
                && message.era == Era::Legacy
                && session.is_some()
                && !is_initialize
                && !retried
            {
                // The server ended the session: open a new one and try once more.
                drop(response);
                retried = true;
                self.reinitialize(session).await?;
                continue;
            }
            if is_initialize && status.is_success() {
                let mut st = self.session();
                st.id = response.headers().get(SESSION_ID).cloned();
            }
            return self.deliver(response, message, id).await;
        }
    }

    /// Reads a response to request `id`: JSON, an event stream (resumed on 2025 when it
    /// breaks), or an HTTP error.
    async fn deliver(
        &self,
        response: Response<Body>,
        message: &Outgoing,
        id: &RequestId,
    ) -> Result<(), McpError> {
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !status.is_success() {
            let body = read_body(response).await.unwrap_or_default();
            return Err(http_error(status, &body, &self.url));
        }
        if content_type.starts_with("text/event-stream") {
            return self.read_answer_stream(response, message, id).await;
        }
        if status == StatusCode::ACCEPTED {
            return Err(McpError::internal(format!(
                "{} accepted the request without answering it (HTTP 202)",
                self.url
            )));
        }
        let body = read_body(response).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(McpError::internal(format!(
                "{} answered HTTP {status} with an empty body",
                self.url
            )));
        }
        self.forward(body.to_vec()).await;
        Ok(())
    }

    async fn forward(&self, message: Vec<u8>) -> bool {
        self.incoming.send(Incoming::Message(message)).await.is_ok()
    }

    /// Forwards the events of a response stream until the answer to `id` arrives. A 2025 stream
    /// that ends first is resumed from its last event id.
    async fn read_answer_stream(
        &self,
        response: Response<Body>,
        message: &Outgoing,
        id: &RequestId,
    ) -> Result<(), McpError> {
        let mut parser = SseParser::default();
        let mut response = response;
        let mut resumptions = 0;
        loop {
            if self.pump(response.into_body(), &mut parser, Some(id)).await {
                return Ok(());
            }
            let Some(last_id) = parser.last_id.clone() else {
                return Err(McpError::internal(format!(
                    "the response stream of request {id} ended before its answer"
                )));
            };
            if message.era == Era::Modern || resumptions >= self.max_resumptions {
                return Err(McpError::internal(format!(
                    "the response stream of request {id} ended before its answer \
                     (resumed {resumptions} times)"
                )));
            }
            resumptions += 1;
            tokio::time::sleep(retry_delay(&parser)).await;
            response = self.resume(&last_id).await?;
        }
    }

    /// `GET` + `Last-Event-ID`: the rest of a 2025 stream.
    async fn resume(&self, last_id: &str) -> Result<Response<Body>, McpError> {
        let request = self
            .get_stream()
            .header(LAST_EVENT_ID, last_id)
            .body(Full::new(Bytes::new()))
            .map_err(|e| McpError::internal(format!("invalid resumption request: {e}")))?;
        let response = self.send(request).await?;
        if !response.status().is_success() {
            let status = response.status();
            let body = read_body(response).await.unwrap_or_default();
            return Err(http_error(status, &body, &self.url));
        }
        Ok(response)
    }

    fn get_stream(&self) -> axum::http::request::Builder {
        let (session, version) = {
            let st = self.session();
            (st.id.clone(), st.version.clone())
        };
        let mut builder = self
            .request(Method::GET)
            .header(ACCEPT, "text/event-stream");
        if let Some(session) = session {
            builder = builder.header(SESSION_ID, session);
        }
        if let Some(version) = version {
            builder = builder.header(PROTOCOL_VERSION, version);
        }
        builder
    }

    /// Forwards the events of `body`; true once the answer to `answer_to` went through.
    async fn pump(
        &self,
        mut body: Body,
        parser: &mut SseParser,
        answer_to: Option<&RequestId>,
    ) -> bool {
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { return false };
            let Ok(chunk) = frame.into_data() else {
                continue;
            };
            let events = match parser.feed(&chunk) {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!("{e}");
                    return false;
                }
            };
            for event in events {
                if event.data.trim().is_empty() {
                    continue;
                }
                let answered = match (answer_to, serde_json::from_str::<Peek>(&event.data)) {
                    (Some(id), Ok(peek)) => peek.method.is_none() && peek.id.as_ref() == Some(id),
                    _ => false,
                };
                if !self.forward(event.data.into_bytes()).await || answered {
                    return true;
                }
            }
        }
        false
    }

    /// The standalone `GET` stream of a 2025 session: the server's notifications and requests,
    /// reopened (from the last event id) when it ends, until the server refuses it.
    async fn standalone(&self, ready: tokio::sync::oneshot::Sender<()>) {
        let mut ready = Some(ready);
        let mut parser = SseParser::default();
        let mut failures = 0;
        loop {
            let mut builder = self.get_stream();
            if let Some(last) = &parser.last_id {
                builder = builder.header(LAST_EVENT_ID, last.as_str());
            }
            let Ok(request) = builder.body(Full::new(Bytes::new())) else {
                return;
            };
            let response = self.send(request).await;
            if let Some(ready) = ready.take() {
                let _ = ready.send(());
            }
            match response {
                Ok(response) if response.status().is_success() => {
                    failures = 0;
                    self.pump(response.into_body(), &mut parser, None).await;
                }
                Ok(response) if response.status() == StatusCode::METHOD_NOT_ALLOWED => return,
                Ok(response) => {
                    tracing::debug!(status = %response.status(), "standalone stream refused");
                    failures += 1;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "standalone stream failed");
                    failures += 1;
                }
            }
            if failures >= 3 || self.incoming.is_closed() {
                return;
            }
            tokio::time::sleep(retry_delay(&parser)).await;
        }
    }

    /// Replaces an expired 2025 session: replays `initialize` and `notifications/initialized`.
    async fn reinitialize(&self, expired: Option<HeaderValue>) -> Result<(), McpError> {
        let _one_at_a_time = self.reinit.lock().await;
        let (current, initialize, initialized) = {
            let st = self.session();
            (st.id.clone(), st.initialize.clone(), st.initialized.clone())
        };
        if current != expired {
            return Ok(()); // another request already opened a new session
        }
        let Some(initialize) = initialize else {
            return Err(McpError::internal(
                "the session expired and no initialize to replay",
            ));
        };
        self.session().id = None;
        let request = self
            .request(Method::POST)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(Full::new(Bytes::from(initialize)))
            .map_err(|e| McpError::internal(format!("invalid initialize request: {e}")))?;
        let response = self.send(request).await?;
        let status = response.status();
        if !status.is_success() {
            let body = read_body(response).await.unwrap_or_default();
            return Err(http_error(status, &body, &self.url));
        }
        let new_id = response.headers().get(SESSION_ID).cloned();
        // The answer is the server's business; the client already knows the session's terms.
        drop(response);
        self.session().id = new_id.clone();
        tracing::info!("the server ended the session; a new one was opened");
        if let Some(initialized) = initialized {
            let mut builder = self
                .request(Method::POST)
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream");
            if let Some(id) = &new_id {
                builder = builder.header(SESSION_ID, id);
            }
            if let Some(version) = self.session().version.clone() {
                builder = builder.header(PROTOCOL_VERSION, version);
            }
            if let Ok(request) = builder.body(Full::new(Bytes::from(initialized))) {
                let _ = self.send(request).await;
            }
        }
        Ok(())
    }

    /// `DELETE` of the 2025 session, if there is one (a server may answer 405).
    async fn end_session(&self) {
        let (session, version) = {
            let st = self.session();
            (st.id.clone(), st.version.clone())
        };
        let Some(session) = session else { return };
        let mut builder = self.request(Method::DELETE).header(SESSION_ID, session);
        if let Some(version) = version {
            builder = builder.header(PROTOCOL_VERSION, version);
        }
        if let Ok(request) = builder.body(Full::new(Bytes::new())) {
            let _ = tokio::time::timeout(Duration::from_secs(2), self.send(request)).await;
        }
    }
}

/// Mozilla's root certificates, the ring provider, TLS 1.2 and 1.3.
#[cfg(feature = "https")]
fn default_tls() -> Result<rustls::ClientConfig, McpError> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|builder| builder.with_root_certificates(roots).with_no_client_auth())
        .map_err(|e| McpError::internal(format!("TLS configuration: {e}")))
}

fn retry_delay(parser: &SseParser) -> Duration {
    parser
        .retry_ms
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_RETRY)
        .min(MAX_RETRY)
}

async fn read_body(response: Response<Body>) -> Result<Bytes, McpError> {
    let limited = http_body_util::Limited::new(response.into_body(), MAX_BODY);
    match limited.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => Err(McpError::internal(format!(
            "could not read the answer: {e}"
        ))),
    }
}

/// The error for an HTTP error status: the JSON-RPC error in the body when there is one (its
/// code kept), else the status and the start of the body.
fn http_error(status: StatusCode, body: &[u8], url: &Uri) -> McpError {
    if let Ok(ErrorBody { error }) = serde_json::from_slice(body) {
        return McpError::from_wire(error);
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    let text = text.trim();
    let mut message = format!("{url} answered HTTP {status}");
    if !text.is_empty() {
        message = format!("{message}: {text}");
    }
    McpError::internal(message)
}
