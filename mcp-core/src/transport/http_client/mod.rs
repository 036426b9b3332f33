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

mod exchange;
mod session;
mod sse;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, Uri};
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::rt::TokioExecutor;
use tokio::task::{AbortHandle, JoinSet};

use self::exchange::{Conn, Session};
use super::wire::{Incoming, OutgoingKind, Transport, Wire};
use crate::auth::AuthProvider;
use crate::era::Era;
use crate::error::McpError;
use crate::peer::RunningRequests;

/// How long [`HttpClientTransport`] waits for a TCP connection by default (10 s).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many times one 2025 response stream is resumed before the request fails (5).
pub const DEFAULT_MAX_RESUMPTIONS: u32 = 5;
/// How many requests (each POST and its answer stream) one client keeps open at once (64);
/// more wait for one to finish (responses and notifications never wait). Below the server's per-client connection cap (256 by
/// default), so a burst of calls never has its connections refused.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 64;
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
/// # async fn run() -> modelctx_core::Result<()> {
/// use modelctx_core::client::Client;
/// use modelctx_core::transport::HttpClientTransport;
///
/// let http = HttpClientTransport::new("http://127.0.0.1:8080/mcp")?
///     .header("x-api-key", "secret")?;
/// let client = Client::builder().connect(http).await?;
/// println!("speaking {}", client.protocol_version());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct HttpClientTransport {
    url: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    connect_timeout: Duration,
    max_resumptions: u32,
    max_concurrent_requests: usize,
    tls: crate::fetch::Tls,
    auth: Option<Arc<dyn AuthProvider>>,
}

impl std::fmt::Debug for HttpClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values may be credentials: names only.
        let headers: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpClientTransport")
            .field("url", &self.url)
            .field("headers", &headers)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_resumptions", &self.max_resumptions)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field("auth", &self.auth.is_some())
            .finish_non_exhaustive()
    }
}

impl HttpClientTransport {
    /// The endpoint at `url`. Fails on a URL that is not `http://` (or, with the `https`
    /// feature, `https://`) with a host.
    pub fn new(url: &str) -> Result<Self, McpError> {
        let uri = crate::fetch::parse_url(url)?;
        Ok(Self {
            url: uri,
            headers: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_resumptions: DEFAULT_MAX_RESUMPTIONS,
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            tls: None,
            auth: None,
        })
    }

    /// The TLS settings for `https://` (trusted roots, client certificates), instead of the
    /// default: Mozilla's root certificates, no client certificate.
    #[cfg(feature = "https")]
    pub fn tls_config(mut self, config: Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(config);
        self
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

    /// Authorizes every request with `provider` (an [`OAuth`](crate::client::oauth::OAuth)
    /// login, or credentials of your own): its `Authorization` header goes on every POST, GET
    /// and DELETE, and a 401 or 403 asks it for new credentials (at most 3 times per request)
    /// before the request fails.
    pub fn auth(mut self, provider: impl AuthProvider) -> Self {
        self.auth = Some(Arc::new(provider));
        self
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

    /// How many HTTP requests may be open at once (default
    /// [`DEFAULT_MAX_CONCURRENT_REQUESTS`]); a request beyond waits for one to finish. A
    /// request whose answer streams (progress, a long tool) holds its place until the answer
    /// ends; the 2025 standalone stream, responses and notifications do not count. At least 1.
    pub fn max_concurrent_requests(mut self, requests: usize) -> Self {
        self.max_concurrent_requests = requests.max(1);
        self
    }
}

impl Transport for HttpClientTransport {
    fn carries_headers(&self) -> bool {
        true
    }

    async fn run(self, wire: Wire) {
        let connector = match crate::fetch::connector(self.connect_timeout, &self.tls) {
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
            auth: self.auth,
            requests: tokio::sync::Semaphore::new(self.max_concurrent_requests),
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
