//! The 2025-11-25 wire: `initialize` opens a session named by `Mcp-Session-Id`; POST for
//! messages, GET for the standalone stream, DELETE to end; idle sessions expire.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

use super::config::HttpConfig;
use super::events::{self, EventStore, Resume};
use super::headers;
use super::response::{self, Answering};
use crate::engine::dispatch::{self, run_hooks, Origin};
use crate::engine::RunningServer;
use crate::era::LEGACY_VERSIONS;
use crate::error::echo_capped;
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
    /// Ids of the requests running (or about to), so a second request with one is refused.
    ids: Mutex<HashSet<RequestId>>,
    /// Requests running at once ([`ServerOptions::max_in_flight`](crate::lowlevel::ServerOptions)).
    slots: Arc<Semaphore>,
    /// The identity of the principal that opened the session (`None`: an open endpoint).
    owner: Option<String>,
    /// Whose share of the sessions this one counts in ([`HttpConfig::max_sessions_per_client`]).
    client: Option<String>,
}

/// The open sessions, and how many each client holds (counting `initialize`s under way).
#[derive(Default)]
struct Sessions {
    map: HashMap<String, Arc<HttpSession>>,
    reserved: usize,
    per_client: HashMap<String, usize>,
}

impl Sessions {
    fn remove(&mut self, id: &str) -> Option<Arc<HttpSession>> {
        let session = self.map.remove(id)?;
        if let Some(client) = &session.client {
            self.release(client);
        }
        Some(session)
    }

    fn release(&mut self, client: &str) {
        if let Some(n) = self.per_client.get_mut(client) {
            *n -= 1;
            if *n == 0 {
                self.per_client.remove(client);
            }
        }
    }
}

pub(crate) struct Shared<S> {
    pub(crate) server: Arc<RunningServer<S>>,
    pub(crate) config: HttpConfig,
    sessions: Mutex<Sessions>,
    /// Bytes held by every session's event store.
    event_bytes: Arc<AtomicUsize>,
}

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
            sessions: Mutex::new(Sessions::default()),
            event_bytes: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Session `id`, if it exists and belongs to the request's principal: another caller's
    /// token gets the same answer as an unknown id (404), so ids cannot be probed.
    fn get(&self, id: &str, http: &HttpRequest) -> Option<Arc<HttpSession>> {
        let session = lock(&self.sessions).map.get(id).cloned()?;
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
        let all: Vec<_> = {
            let mut sessions = lock(&self.sessions);
            sessions.per_client.clear();
            sessions.map.drain().map(|(_, s)| s).collect()
        };
        for session in all {
            self.end(&session);
        }
    }

    fn expire(&self) {
        let idle = self.config.session_idle_timeout;
        let expired: Vec<_> = {
            let mut sessions = lock(&self.sessions);
            let ids: Vec<String> = sessions
                .map
                .iter()
                // A session whose standalone stream is open is in use.
                .filter(|(_, s)| {
                    lock(&s.standalone).is_some() && lock(&s.last_seen).elapsed() > idle
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter()
                .filter_map(|id| sessions.remove(id))
                .collect::<Vec<_>>()
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
                    "Bad Request: unsupported MCP-Protocol-Version {} in a 2025-11-25 session \
                     (a 2026-07-28 request carries its _meta envelope and no session)",
                    echo_capped(version)
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

/// A request's claim on its session: its id (a second request with it is refused) and one of
/// the session's in-flight slots, given back however the request ends (answered, timed out,
/// cancelled).
struct InFlightEntry {
    session: Arc<HttpSession>,
    id: RequestId,
    _slot: OwnedSemaphorePermit,
}

impl Drop for InFlightEntry {
    fn drop(&mut self) {
        self.session.in_flight.finish(&self.id);
        lock(&self.session.ids).remove(&self.id);
    }
}

/// Claims `id` and a slot, or the refusal: -32600 for an id already running (as on stdio),
/// 429 with -32600 when [`ServerOptions::max_in_flight`](crate::lowlevel::ServerOptions)
/// requests of the session are running.
fn claim(
    session: &Arc<HttpSession>,
    id: &RequestId,
    limit: usize,
) -> Result<InFlightEntry, (StatusCode, McpError)> {
    let Ok(slot) = session.slots.clone().try_acquire_owned() else {
        return Err((
            StatusCode::TOO_MANY_REQUESTS,
            McpError::invalid_request(format!(
                "Too many requests in flight in this session (the limit is {limit}); \
                 wait for answers or cancel some"
            )),
        ));
    };
    if !lock(&session.ids).insert(id.clone()) {
        return Err((
            StatusCode::BAD_REQUEST,
            McpError::invalid_request(
                "Invalid request: a request with this id is already in flight in this session",
            ),
        ));
    }
    Ok(InFlightEntry {
        session: session.clone(),
        id: id.clone(),
        _slot: slot,
    })
}

async fn run_request<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    session: Arc<HttpSession>,
    http: Arc<HttpRequest>,
    id: RequestId,
    method: String,
    params: Option<Box<serde_json::value::RawValue>>,
) -> Response {
    let limit = shared.server.server.options.max_in_flight.max(1);
    let entry = match claim(&session, &id, limit) {
        Ok(entry) => entry,
        Err((status, e)) => return error(status, Some(&id), e),
    };
    let server = shared.server.clone();
    let request_id = id.clone();
    let tracked = session.clone();
    let register = |abort: tokio::task::AbortHandle| {
        session.in_flight.insert(id.clone(), abort, ());
    };
    let store = Some(session.store.clone());
    let answering = Answering::new(&shared.config, http.headers());
    response::run(
        answering,
        Some(id.clone()),
        store,
        register,
        move |sink| async move {
            // Given back however the request ends (the future is dropped when it is aborted).
            let _entry = entry;
            let origin = Origin {
                server: &server,
                session: &tracked.session,
                sink: &sink,
                surface_internal: server.server.options.surface_internal_errors,
                http: Some(http),
            };
            dispatch::handle_request(origin, request_id, method, params).await
        },
    )
    .await
}

/// Whose share of the sessions a request counts in: its principal, else its peer's address
/// (`None`, no share, when neither is known, as behind a router without connection info).
fn client_of(http: &HttpRequest) -> Option<String> {
    match http.principal() {
        Some(principal) => Some(format!("principal:{}", principal.identity())),
        None => http.peer_addr().map(|peer| format!("ip:{}", peer.ip())),
    }
}

/// A session slot held while `initialize` runs (given back unless the session opens).
struct Reservation<'a, S> {
    shared: &'a Shared<S>,
    client: Option<String>,
    kept: bool,
}

impl<S> Drop for Reservation<'_, S> {
    fn drop(&mut self) {
        let mut sessions = lock(&self.shared.sessions);
        sessions.reserved -= 1;
        if !self.kept {
            if let Some(client) = &self.client {
                sessions.release(client);
            }
        }
    }
}

/// Takes a session slot for `client`, or says which limit refused it.
fn reserve<'a, S: Send + Sync + 'static>(
    shared: &'a Shared<S>,
    client: Option<String>,
) -> Result<Reservation<'a, S>, McpError> {
    let mut sessions = lock(&shared.sessions);
    if sessions.map.len() + sessions.reserved >= shared.config.max_sessions {
        return Err(McpError::new(
            crate::codes::INTERNAL_ERROR,
            "Too many sessions; try again later",
        ));
    }
    if let Some(client) = &client {
        let held = sessions.per_client.get(client).copied().unwrap_or(0);
        let limit = shared.config.sessions_per_client();
        if held >= limit {
            return Err(McpError::new(
                crate::codes::INTERNAL_ERROR,
                format!(
                    "Too many sessions from this client (the limit is {limit}); \
                     end some (DELETE) or try again later"
                ),
            ));
        }
        *sessions.per_client.entry(client.clone()).or_insert(0) += 1;
    }
    sessions.reserved += 1;
    Ok(Reservation {
        shared,
        client,
        kept: false,
    })
}

async fn initialize<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    http: &Arc<HttpRequest>,
    message: Message,
) -> Response {
    let Message::Request { id, method, params } = message else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let client = client_of(http);
    let mut reservation = match reserve(shared, client.clone()) {
        Ok(reservation) => reservation,
        Err(e) => return error(StatusCode::SERVICE_UNAVAILABLE, Some(&id), e),
    };
    let session_id = match new_session_id() {
        Ok(sid) => sid,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, Some(&id), e),
    };
    let (outbound, standalone) = mpsc::channel(shared.config.session_queue.max(1));
    let session = Session::with_id(session_id.clone().into(), outbound);
    let http_session = Arc::new(HttpSession {
        session: session.clone(),
        store: Arc::new(EventStore::new(
            shared.config.event_store_session_bytes,
            shared.config.event_store_total_bytes,
            shared.event_bytes.clone(),
        )),
        standalone_seq: std::sync::atomic::AtomicU64::new(0),
        standalone: Mutex::new(Some(standalone)),
        last_seen: Mutex::new(Instant::now()),
        in_flight: RunningRequests::default(),
        ids: Mutex::new(HashSet::new()),
        slots: Arc::new(Semaphore::new(
            shared
                .server
                .server
                .options
                .max_in_flight
                .clamp(1, Semaphore::MAX_PERMITS),
        )),
        owner: http.principal().map(|p| p.identity()),
        client,
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
    lock(&shared.sessions)
        .map
        .insert(session_id.clone(), http_session);
    reservation.kept = true;
    drop(reservation);
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
    if let Some(last) = headers.get("last-event-id") {
        // Resumption: the rest of the stream that event belonged to.
        let parsed = last.to_str().ok().and_then(events::parse_id);
        let Some((stream, seq)) = parsed else {
            return error(
                StatusCode::BAD_REQUEST,
                None,
                McpError::invalid_request(
                    "Bad Request: Last-Event-ID is not an event id of this server",
                ),
            );
        };
        match session.store.resume(stream, seq) {
            Resume::Ready => {}
            // 400, not 404: a 404 tells a 2025 client its session is gone.
            Resume::Unknown => {
                return error(
                    StatusCode::BAD_REQUEST,
                    None,
                    McpError::invalid_request(
                        "Bad Request: Last-Event-ID names no stream of this session",
                    ),
                )
            }
            Resume::Gone => {
                return error(
                    StatusCode::GONE,
                    None,
                    McpError::invalid_request(format!(
                        "Gone: events after {stream}-{seq} are no longer kept (the session's \
                         event store is bounded); messages of that stream were lost"
                    )),
                )
            }
        }
        let (out, body) = mpsc::channel(16);
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
                std::task::Poll::Ready(Some(Ok(self.session.store.push(0, seq, &line))))
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
