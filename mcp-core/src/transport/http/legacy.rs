//! The 2025-11-25 wire: `initialize` opens a session named by `Mcp-Session-Id`; POST for
//! messages, GET for the standalone stream, DELETE to end; idle sessions expire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use super::config::HttpConfig;
use super::events::{self, EventStore};
use super::headers;
use super::response;
use crate::engine::dispatch::{self, run_hooks, Origin};
use crate::engine::RunningServer;
use crate::era::LEGACY_VERSIONS;
use crate::error::McpError;
use crate::jsonrpc::{self, Message, RequestId};
use crate::lowlevel::{HttpRequest, Session};
use crate::peer::RunningRequests;
use crate::types::CancelledNotificationParams;

pub(crate) struct HttpSession {
    session: Session,
    store: Arc<EventStore>,
    standalone_seq: std::sync::atomic::AtomicU64,
    standalone: Mutex<Option<mpsc::Receiver<String>>>,
    last_seen: Mutex<Instant>,
    in_flight: RunningRequests,
    /// The identity of the principal that opened the session (`None`: an open endpoint).
    owner: Option<String>,
}

pub(crate) struct Shared<S> {
    pub(crate) server: Arc<RunningServer<S>>,
    pub(crate) config: HttpConfig,
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
}

/// Events kept per session for `Last-Event-ID` replay.
const EVENT_STORE_CAPACITY: usize = 1024;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// 128 bits from the OS CSPRNG as 32 hex characters (visible ASCII only).
fn new_session_id() -> Result<String, McpError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| McpError::internal(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl<S: Send + Sync + 'static> Shared<S> {
    pub(crate) fn new(server: Arc<RunningServer<S>>, config: HttpConfig) -> Self {
        Self {
            server,
            config,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// Session `id`, if it exists and belongs to the request's principal: another caller's
    /// token gets the same answer as an unknown id (404), so ids cannot be probed.
    fn get(&self, id: &str, http: &HttpRequest) -> Option<Arc<HttpSession>> {
        let session = lock(&self.sessions).get(id).cloned()?;
        let caller = http.principal().map(|p| p.identity());
        if session.owner != caller {
            tracing::warn!("refused a request for a session opened by another principal");
            return None;
        }
        Some(session)
    }

    fn end(&self, session: &HttpSession) {
        // The empty marker ends an open standalone GET stream.
        let _ = session.session.outbound_sender().try_send(String::new());
        session.session.mark_closed();
        if session.session.was_connected() {
            run_hooks(&self.server.server.on_close, &session.session);
        }
    }

    /// Ends every session (shutdown).
    pub(crate) fn close_all(&self) {
        let all: Vec<_> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for session in all {
            self.end(&session);
        }
    }

    fn expire(&self) {
        let idle = self.config.session_idle_timeout;
        let expired: Vec<_> = {
            let mut sessions = lock(&self.sessions);
            let ids: Vec<String> = sessions
                .iter()
                // A session whose standalone stream is open is in use.
                .filter(|(_, s)| {
                    lock(&s.standalone).is_some() && lock(&s.last_seen).elapsed() > idle
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in expired {
            tracing::debug!(session = session.session.id(), "idle session expired");
            self.end(&session);
        }
    }
}

/// Checks for idle sessions every tenth of the idle timeout (at least once a second).
pub(crate) fn spawn_expiry<S: Send + Sync + 'static>(shared: &Arc<Shared<S>>) {
    let weak = Arc::downgrade(shared);
    let period = (shared.config.session_idle_timeout / 10).max(std::time::Duration::from_secs(1));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        loop {
            tick.tick().await;
            match weak.upgrade() {
                Some(shared) => shared.expire(),
                None => break,
            }
        }
    });
}

fn error(status: StatusCode, id: Option<&RequestId>, e: McpError) -> Response {
    response::json(status, jsonrpc::encode_error(id, &e.to_wire(false)))
}

pub(crate) async fn post<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    session_id: Option<&str>,
    http: &Arc<HttpRequest>,
    message: Message,
) -> Response {
    let headers = http.headers();
    if let Some(version) = headers::get(headers, "mcp-protocol-version") {
        if !LEGACY_VERSIONS.contains(&version) {
            return error(
                StatusCode::BAD_REQUEST,
                None,
                McpError::invalid_request(format!(
                    "Bad Request: unsupported MCP-Protocol-Version {version}"
                )),
            );
        }
    }
    let session = match session_id {
        Some(id) => match shared.get(id, http) {
            Some(session) => session,
            None => return StatusCode::NOT_FOUND.into_response(),
        },
        None => match &message {
            Message::Request { method, .. } if method == "initialize" => {
                return initialize(shared, http, message).await
            }
            Message::Request { id, .. } => {
                return error(
                    StatusCode::BAD_REQUEST,
                    Some(id),
                    McpError::invalid_request(
                        "Bad Request: missing Mcp-Session-Id; send initialize first",
                    ),
                )
            }
            _ => {
                return error(
                    StatusCode::BAD_REQUEST,
                    None,
                    McpError::invalid_request("Bad Request: missing Mcp-Session-Id"),
                )
            }
        },
    };
    *lock(&session.last_seen) = Instant::now();
    match message {
        Message::Response { id, outcome } => {
            session.session.resolve(&id, outcome);
            StatusCode::ACCEPTED.into_response()
        }
        Message::Notification { method, params } => {
            if method == "notifications/cancelled" {
                let cancelled = params
                    .as_deref()
                    .and_then(|raw| {
                        serde_json::from_str::<CancelledNotificationParams>(raw.get()).ok()
                    })
                    .and_then(|p| p.request_id);
                if let Some(id) = cancelled {
                    session.in_flight.cancel(&id);
                }
            }
            let sink = session.session.outbound_sender();
            let origin = Origin {
                server: &shared.server,
                session: &session.session,
                sink: &sink,
                surface_internal: shared.server.server.options.surface_internal_errors,
                http: Some(http.clone()),
            };
            let timeout = shared.config.request_timeout;
            if tokio::time::timeout(
                timeout,
                dispatch::handle_notification(origin, method, params),
            )
            .await
            .is_err()
            {
                tracing::warn!("a notification handler ran past the request timeout");
            }
            StatusCode::ACCEPTED.into_response()
        }
        Message::Request { id, method, params } => {
            run_request(shared, session, http.clone(), id, method, params).await
        }
    }
}

struct InFlightEntry<'a>(&'a HttpSession, RequestId);

impl Drop for InFlightEntry<'_> {
    fn drop(&mut self) {
        self.0.in_flight.finish(&self.1);
    }
}

async fn run_request<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    session: Arc<HttpSession>,
    http: Arc<HttpRequest>,
    id: RequestId,
    method: String,
    params: Option<Box<serde_json::value::RawValue>>,
) -> Response {
    let server = shared.server.clone();
    let request_id = id.clone();
    let tracked = session.clone();
    let register = |abort: tokio::task::AbortHandle| {
        session.in_flight.insert(id.clone(), abort, ());
    };
    let store = Some(session.store.clone());
    let response = response::run(
        shared.config.request_timeout,
        Some(id.clone()),
        store,
        register,
        move |sink| async move {
            let origin = Origin {
                server: &server,
                session: &tracked.session,
                sink: &sink,
                surface_internal: server.server.options.surface_internal_errors,
                http: Some(http),
            };
            // Removed however the request ends: answered, timed out or cancelled.
            let _in_flight = InFlightEntry(&tracked, request_id.clone());
            dispatch::handle_request(origin, request_id, method, params).await
        },
    )
    .await;
    response
}

async fn initialize<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    http: &Arc<HttpRequest>,
    message: Message,
) -> Response {
    let Message::Request { id, method, params } = message else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    if lock(&shared.sessions).len() >= shared.config.max_sessions {
        let e = McpError::new(
            crate::codes::INTERNAL_ERROR,
            "Too many sessions; try again later",
        );
        return error(StatusCode::SERVICE_UNAVAILABLE, Some(&id), e);
    }
    let session_id = match new_session_id() {
        Ok(sid) => sid,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, Some(&id), e),
    };
    let (outbound, standalone) = mpsc::channel(shared.config.session_queue.max(1));
    let session = Session::with_id(session_id.clone().into(), outbound);
    let http_session = Arc::new(HttpSession {
        session: session.clone(),
        store: Arc::new(EventStore::new(EVENT_STORE_CAPACITY)),
        standalone_seq: std::sync::atomic::AtomicU64::new(0),
        standalone: Mutex::new(Some(standalone)),
        last_seen: Mutex::new(Instant::now()),
        in_flight: RunningRequests::default(),
        owner: http.principal().map(|p| p.identity()),
    });
    let (sink, _unused) = mpsc::channel(1);
    let origin = Origin {
        server: &shared.server,
        session: &session,
        sink: &sink,
        surface_internal: shared.server.server.options.surface_internal_errors,
        http: Some(http.clone()),
    };
    let handshake = dispatch::handle_request(origin, id.clone(), method, params);
    let Ok(line) = tokio::time::timeout(shared.config.request_timeout, handshake).await else {
        let e = McpError::internal("initialize ran past the request timeout");
        return error(StatusCode::OK, Some(&id), e);
    };
    if !session.is_initialized() {
        return response::json(StatusCode::OK, line);
    }
    lock(&shared.sessions).insert(session_id.clone(), http_session);
    if session.begin() {
        run_hooks(&shared.server.server.on_connect, &session);
    }
    let mut response = response::json(StatusCode::OK, line);
    if let Ok(value) = HeaderValue::from_str(&session_id) {
        response.headers_mut().insert("mcp-session-id", value);
    }
    response
}

pub(crate) fn get_stream<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    id: &str,
    http: &HttpRequest,
) -> Response {
    let headers = http.headers();
    let Some(session) = shared.get(id, http) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let accepts = headers::get(headers, "accept").is_some_and(|a| a.contains("text/event-stream"));
    if !accepts {
        return StatusCode::NOT_ACCEPTABLE.into_response();
    }
    *lock(&session.last_seen) = Instant::now();
    if let Some(last) = headers::get(headers, "last-event-id") {
        // Resumption: the rest of the stream that event belonged to.
        let Some((stream, seq)) = events::parse_id(last) else {
            return StatusCode::BAD_REQUEST.into_response();
        };
        if !session.store.knows(stream) {
            return StatusCode::NOT_FOUND.into_response();
        }
        let (out, body) = mpsc::channel(64);
        let store = session.store.clone();
        let timeout = shared.config.request_timeout;
        tokio::spawn(async move { store.replay(stream, seq, out, timeout).await });
        return response::sse_body(response::ChannelBody(body));
    }
    let Some(rx) = lock(&session.standalone).take() else {
        return StatusCode::CONFLICT.into_response();
    };
    let stream = StandaloneStream {
        rx: Some(rx),
        session,
        primed: false,
    };
    response::sse_body(stream)
}

/// The session's standalone stream: a priming event, then every session-level message, each
/// with an id kept in the event store.
struct StandaloneStream {
    rx: Option<mpsc::Receiver<String>>,
    session: Arc<HttpSession>,
    primed: bool,
}

impl Drop for StandaloneStream {
    /// The client went away: the next GET gets the stream (and what queued meanwhile).
    fn drop(&mut self) {
        if let Some(rx) = self.rx.take() {
            if !self.session.session.is_closed() {
                *lock(&self.session.standalone) = Some(rx);
                *lock(&self.session.last_seen) = Instant::now();
            }
        }
    }
}

impl futures_core::Stream for StandaloneStream {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        if !self.primed {
            self.primed = true;
            return std::task::Poll::Ready(Some(Ok(events::priming(0))));
        }
        let Some(rx) = self.rx.as_mut() else {
            return std::task::Poll::Ready(None);
        };
        match rx.poll_recv(cx) {
            std::task::Poll::Pending => std::task::Poll::Pending,
            // The session ended (the empty marker) or its sender is gone.
            std::task::Poll::Ready(None) => std::task::Poll::Ready(None),
            std::task::Poll::Ready(Some(line)) if line.is_empty() => {
                self.rx = None;
                std::task::Poll::Ready(None)
            }
            std::task::Poll::Ready(Some(line)) => {
                let seq = self
                    .session
                    .standalone_seq
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    + 1;
                std::task::Poll::Ready(Some(Ok(self.session.store.push(0, seq, line))))
            }
        }
    }
}

pub(crate) fn delete<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    id: &str,
    http: &HttpRequest,
) -> Response {
    if shared.get(id, http).is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let removed = lock(&shared.sessions).remove(id);
    match removed {
        Some(session) => {
            shared.end(&session);
            StatusCode::OK.into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
