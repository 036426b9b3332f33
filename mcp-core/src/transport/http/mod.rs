//! Streamable HTTP for both eras at one URL: [`McpHttp`], a tower `Service` serving
//! [`HttpConfig::path`] (run it under any tower stack), or the same endpoint as an axum `Router`
//! to merge into an app of your own ([`McpHttp::axum_router`]), plus `serve_http` / `serve_http_on` methods on
//! [`Server`](crate::lowlevel::Server) and [`McpServer`](crate::server::McpServer) for the
//! common case.
//!
//! How a message is routed (the rule the reference servers use): a request without an
//! `Mcp-Session-Id` that carries a 2026 `_meta` envelope, or an `MCP-Protocol-Version` header
//! newer than 2025-11-25, is served statelessly (2026-07-28); so is one with an `Mcp-Session-Id`
//! when both its header and its envelope say 2026 (the 2026 transport ignores that header).
//! Everything else goes through the 2025-11-25 session machinery (`initialize` opens a session
//! whose id comes from the OS CSPRNG), where a 2026 `MCP-Protocol-Version` header is refused
//! (400): one session, one era.
//!
//! Clients that accept only `application/json` get JSON answers: the messages a handler sends
//! before its result (progress, logs) are dropped for them.

mod config;
mod events;
mod guard;
pub(crate) mod headers;
mod keep_alive;
mod lazy_timeout;
mod legacy;
mod listen;
mod memory_store;
#[cfg(feature = "redis")]
mod redis_store;
mod response;
mod service;
mod sessions;
mod standalone;
pub(crate) mod stateless;
mod store;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;

pub use config::HttpConfig;
pub use memory_store::{MemoryEventStore, MemorySessionStore};
#[cfg(feature = "redis")]
pub use redis_store::RedisStore;
pub use store::{EventStore, Replay, SessionRecord, SessionStore, StoreFuture};

use crate::auth::{Protection, PROTECTED_RESOURCE_PATH};
use crate::era::LEGACY_VERSIONS;
use crate::error::McpError;
use crate::jsonrpc::{self, Decoded};
use crate::lowlevel::IntoServer;
use crate::lowlevel::RunningServer;
use crate::lowlevel::{peek, HttpRequest, Params, Peeked};

/// The HTTP endpoint of one running server: both eras, every session.
///
/// Two ways to serve it:
///
/// - as a [tower `Service`](tower_service::Service) (`McpHttp` is one): it serves the endpoint
///   at [`HttpConfig::path`] (plus, with [`HttpConfig::auth`], the Protected Resource Metadata
///   at its well-known paths) and answers `404` anywhere else. Put it under any tower layer,
///   hand it to hyper-util, or use it as the fallback of an axum app
///   (`Router::fallback_service`). The `Service` implementation below has an example;
/// - as an axum [`Router`] from [`axum_router`](Self::axum_router), the same endpoint at
///   [`HttpConfig::path`], to merge into an axum app of your own. The path is set in one place,
///   the config.
///
/// Cloning is cheap (two reference counts) and every clone serves the same sessions.
pub struct McpHttp<S> {
    shared: Arc<sessions::Shared<S>>,
    /// The endpoint at `shared.config.path`, built once: what the `Service` impl delegates to.
    service: Router,
}

impl<S> std::fmt::Debug for McpHttp<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttp")
            .field("path", &self.shared.config.path)
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl<S> Clone for McpHttp<S> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            service: self.service.clone(),
        }
    }
}

impl<S: Send + Sync + 'static> McpHttp<S> {
    /// Starts `server` (enters its lifespan) and prepares the endpoint, which serves
    /// [`config.path`](HttpConfig::path) as a tower `Service`. Fails when the lifespan fails to
    /// start, or when the path is not one a router can serve (it must start with `/` and hold
    /// no `{`, `}`, nor a segment starting with `:` or `*`).
    pub async fn new(
        server: impl IntoServer<State = S>,
        config: HttpConfig,
    ) -> Result<Self, McpError> {
        check_path(&config.path)?;
        let running = RunningServer::start(server.into_server()).await?;
        let shared = Arc::new(sessions::Shared::new(running, config));
        sessions::spawn_expiry(&shared);
        sessions::spawn_answers(&shared);
        let service = build_router(&shared);
        Ok(Self { shared, service })
    }

    /// The path the `Service` serves: [`HttpConfig::path`] of the config it was built with.
    pub fn path(&self) -> &str {
        &self.shared.config.path
    }

    /// The endpoint as an axum router serving [`HttpConfig::path`] (the one place its path is
    /// set), to merge into an axum app of your own:
    /// `Router::new().route("/health", get(health)).merge(http.axum_router())`. The same router is
    /// what `McpHttp` serves as a tower `Service`.
    ///
    /// With [`HttpConfig::auth`] set, the router also serves the Protected Resource Metadata
    /// at its well-known paths and admits only requests with an acceptable token. Those paths
    /// are absolute, which is why the router is merged rather than nested under a prefix (or
    /// put [`ResourceServer::layer`](crate::auth::ResourceServer::layer) on your outer router).
    pub fn axum_router(&self) -> Router {
        self.service.clone()
    }

    /// Ends every session and exits the lifespan.
    pub async fn stop(&self) {
        self.shared.close_all();
        self.shared.server.stop().await;
    }
}

/// `Err` for a path `Router::route` would panic on.
fn check_path(path: &str) -> Result<(), McpError> {
    let refused = |why: &str| {
        Err(McpError::internal(format!(
            "HttpConfig::path `{path}` cannot be served: {why}"
        )))
    };
    if !path.starts_with('/') {
        return refused("it must start with `/`");
    }
    if path.contains(['{', '}']) || path.split('/').any(|s| s.starts_with([':', '*'])) {
        return refused("no `{`, `}`, nor a segment starting with `:` or `*`, may be in it");
    }
    Ok(())
}

/// The endpoint at [`HttpConfig::path`], with the well-known metadata routes and the auth
/// layer when [`HttpConfig::auth`] is set.
fn build_router<S: Send + Sync + 'static>(shared: &Arc<sessions::Shared<S>>) -> Router {
    let path = shared.config.path.as_str();
    let limit = shared.config.max_body_bytes;
    // The body is read (bounded in size and time) by the endpoint itself.
    let router = Router::new()
        .route(path, any(endpoint::<S>))
        .layer(DefaultBodyLimit::max(limit));
    let router = match &shared.config.auth {
        Some(auth) => {
            // The layer answers these itself; the routes make them exist for it.
            let metadata = any(|| async { StatusCode::NOT_FOUND });
            let suffixed = auth
                .metadata_url()
                .split_once(PROTECTED_RESOURCE_PATH)
                .map(|(_, rest)| format!("{PROTECTED_RESOURCE_PATH}{rest}"));
            let mut router = router;
            if path != PROTECTED_RESOURCE_PATH {
                router = router.route(PROTECTED_RESOURCE_PATH, metadata.clone());
            }
            if let Some(suffixed) = suffixed.filter(|p| p != PROTECTED_RESOURCE_PATH && p != path) {
                router = router.route(&suffixed, metadata);
            }
            router.layer(auth.layer())
        }
        None => router,
    };
    router.with_state(shared.clone())
}

impl<S: Send + Sync + 'static> crate::lowlevel::Server<S> {
    /// Serves this server over Streamable HTTP (both eras) at `http://addr/mcp` with the
    /// default [`HttpConfig`] until the process ends. `addr` is anything
    /// [`TcpListener::bind`](tokio::net::TcpListener::bind) takes (`"127.0.0.1:8080"`, a
    /// `SocketAddr`). Fails when the address cannot be bound or the lifespan fails to start.
    ///
    /// ```no_run
    /// # async fn run() -> modelctx_core::Result<()> {
    /// modelctx_core::lowlevel::Server::new("demo").serve_http("127.0.0.1:8080").await
    /// # }
    /// ```
    pub async fn serve_http(
        self,
        addr: impl tokio::net::ToSocketAddrs + std::fmt::Display,
    ) -> Result<(), McpError> {
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| McpError::internal(format!("could not bind {addr}: {e}")))?;
        self.serve_http_on(listener, HttpConfig::default(), std::future::pending())
            .await
    }

    /// Serves on an already bound listener with `config` until `shutdown` completes; requests
    /// in flight then finish before it returns (2025 sessions are ended first).
    ///
    /// The connections are served by hyper's HTTP/1.1 server with the limits of `config`:
    /// [`max_connections`](HttpConfig::max_connections),
    /// [`header_read_timeout`](HttpConfig::header_read_timeout) (also the keep-alive idle
    /// timeout) and [`write_timeout`](HttpConfig::write_timeout). Bound to a non-loopback
    /// address, the default loopback-only `allowed_hosts` and `allowed_origins` are lifted. A
    /// [`McpHttp::axum_router`] mounted in an application of your own gets those from that
    /// application's server instead.
    ///
    /// ```no_run
    /// # async fn run() -> modelctx_core::Result<()> {
    /// use modelctx_core::transport::HttpConfig;
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let mut config = HttpConfig::default();
    /// config.path = "/".into();
    /// # drop(stop);
    /// modelctx_core::lowlevel::Server::new("demo")
    ///     .serve_http_on(listener, config, async { let _ = stopped.await; })
    ///     .await
    /// # }
    /// ```
    pub async fn serve_http_on(
        self,
        listener: tokio::net::TcpListener,
        config: HttpConfig,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), McpError> {
        let mut config = config;
        let loopback = listener
            .local_addr()
            .map(|a| a.ip().is_loopback())
            .unwrap_or(true);
        if !loopback {
            // Host/Origin default to loopback names; off loopback they would refuse everyone.
            if config.allowed_hosts == config::loopback() {
                config.allowed_hosts.clear();
            }
            if config.allowed_origins == config::loopback() {
                config.allowed_origins.clear();
            }
        }
        let limits = config.clone();
        let http = McpHttp::new(self, config).await?;
        let shared = http.shared.clone();
        // On shutdown, end the sessions first: open standalone streams would keep their
        // connections (and so the graceful shutdown) alive forever.
        listen::serve(
            listener,
            {
                let direct = http
                    .shared
                    .config
                    .auth
                    .is_none()
                    .then(|| http.shared.clone());
                let router = http.service.clone();
                move |request, peer| served(direct.clone(), router.clone(), request, peer)
            },
            &limits,
            shutdown,
            move || shared.close_all(),
        )
        .await;
        http.stop().await;
        Ok(())
    }
}

impl<S: Send + Sync + 'static> crate::server::McpServer<S> {
    /// Serves over Streamable HTTP at `http://addr/mcp` until the process ends; see
    /// [`Server::serve_http`](crate::lowlevel::Server::serve_http).
    ///
    /// ```no_run
    /// # async fn run() -> modelctx_core::Result<()> {
    /// modelctx_core::server::McpServer::new("demo").serve_http("127.0.0.1:8080").await
    /// # }
    /// ```
    pub async fn serve_http(
        self,
        addr: impl tokio::net::ToSocketAddrs + std::fmt::Display,
    ) -> Result<(), McpError> {
        self.into_server().serve_http(addr).await
    }

    /// Serves on a bound listener with `config` until `shutdown` completes; see
    /// [`Server::serve_http_on`](crate::lowlevel::Server::serve_http_on).
    pub async fn serve_http_on(
        self,
        listener: tokio::net::TcpListener,
        config: HttpConfig,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), McpError> {
        self.into_server()
            .serve_http_on(listener, config, shutdown)
            .await
    }
}

/// How [`Server::serve_http_on`](crate::lowlevel::Server::serve_http_on) answers one
/// request from `peer`: one at the path goes straight to the endpoint when `direct` is given
/// (no auth layer must see it first), with no routing; anything else goes through the router,
/// which answers as the `Service` does. Either way the request carries the peer's address as
/// `ConnectInfo<SocketAddr>`, as under `axum::serve`.
///
/// Not `async` itself: the request's parts are read here, so the future hyper holds (and
/// moves) for every request carries only what the answer still needs.
fn served<S: Send + Sync + 'static>(
    direct: Option<Arc<sessions::Shared<S>>>,
    mut router: Router,
    request: axum::http::Request<hyper::body::Incoming>,
    peer: SocketAddr,
) -> impl std::future::Future<Output = Result<Response, std::convert::Infallible>> + Send {
    let mut request = request.map(axum::body::Body::new);
    request
        .extensions_mut()
        .insert(axum::extract::ConnectInfo::<SocketAddr>(peer));
    let target = match direct.filter(|shared| request.uri().path() == shared.config.path) {
        Some(shared) => {
            let (http, body) = endpoint_request(request);
            Target::Endpoint(shared, http, body)
        }
        None => Target::Router(Box::pin(tower_service::Service::call(&mut router, request))),
    };
    async move {
        Ok(match target {
            Target::Endpoint(shared, http, body) => respond(shared, http, body).await,
            Target::Router(routed) => match routed.await {
                Ok(response) => response,
                Err(never) => match never {},
            },
        })
    }
}

/// Where [`served`] sends a request.
enum Target<S: Send + Sync + 'static> {
    /// Straight to the endpoint.
    Endpoint(Arc<sessions::Shared<S>>, Arc<HttpRequest>, axum::body::Body),
    /// Through the router (boxed: it is the rarer way, and its future is large).
    Router(Pin<Box<axum::routing::future::RouteFuture<std::convert::Infallible>>>),
}

/// One request at the endpoint's path (its peer from `ConnectInfo`, when the server put it
/// there), as the router's handler.
fn endpoint<S: Send + Sync + 'static>(
    State(shared): State<Arc<sessions::Shared<S>>>,
    request: axum::extract::Request,
) -> impl std::future::Future<Output = Response> + Send {
    let (http, body) = endpoint_request(request);
    respond(shared, http, body)
}

/// A request's parts, shared with its handler, and its body.
fn endpoint_request(request: axum::extract::Request) -> (Arc<HttpRequest>, axum::body::Body) {
    let (parts, body) = request.into_parts();
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|info| info.0);
    (Arc::new(HttpRequest::new(parts, peer)), body)
}

/// The endpoint's answer, in the header map the request came with.
async fn respond<S: Send + Sync + 'static>(
    shared: Arc<sessions::Shared<S>>,
    http: Arc<HttpRequest>,
    body: axum::body::Body,
) -> Response {
    let mut response = answer(&shared, &http, body).await;
    recycle_headers(http, &mut response);
    response
}

/// hyper parses a connection's next request into the header map of the response it sent last
/// (cleared). The request's own map, sized for a request's headers and no longer needed once
/// the request has ended, becomes the response's, so that parse does not grow a small one
/// (a large allocation per request). A request whose parts a handler still holds keeps them.
fn recycle_headers(http: Arc<HttpRequest>, response: &mut Response) {
    let Ok(request) = Arc::try_unwrap(http) else {
        return;
    };
    let mut headers = request.into_headers();
    headers.clear();
    headers.extend(response.headers_mut().drain());
    *response.headers_mut() = headers;
}

/// The answer to one request at the endpoint's path: the checks of its headers, its body
/// read, then [`after_body`]. Only the body read and the answer are awaited here, so what the
/// checks read in between (the message, its routed parts) is not kept in this future.
async fn answer<S: Send + Sync + 'static>(
    shared: &Arc<sessions::Shared<S>>,
    http: &Arc<HttpRequest>,
    body: axum::body::Body,
) -> Response {
    let known = headers::Known::read(http.headers());
    if let Some(refused) = before_body(shared, http, &known) {
        return refused;
    }
    let body = match read_body(&shared.config, body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    match after_body(shared, http, &known, &body) {
        Next::Respond(response) => response,
        Next::Running(started) => started.respond().await,
        Next::Later(answered) => answered.await,
    }
}

/// What the endpoint does with a request once its body is read.
pub(crate) enum Next<'a> {
    /// Answered now (refused, or nothing to run).
    Respond(Response),
    /// A 2026 request, its handler running in a task of its own.
    Running(response::Started),
    /// A longer way (a 2025 session's request, a stream, a 2026 notification), boxed so the
    /// future of every request stays small.
    Later(Pin<Box<dyn Future<Output = Response> + Send + 'a>>),
}

/// The checks made before the body is read: Host, Origin and the like, then the scopes of a
/// 2026 request named in its headers (`known`: the headers the endpoint decides by).
fn before_body<S: Send + Sync + 'static>(
    shared: &Arc<sessions::Shared<S>>,
    http: &Arc<HttpRequest>,
    known: &headers::Known<'_>,
) -> Option<Response> {
    if let Some(refused) = guard::check(&shared.config, known) {
        return Some(refused);
    }
    let session_id = headers::text(known.session_id);
    let modern_header =
        headers::text(known.protocol_version).is_some_and(|v| !LEGACY_VERSIONS.contains(&v));
    if http.method() == Method::POST && (session_id.is_none() || modern_header) {
        // 2026: the tool, prompt or resource is named in headers, so its scopes are checked
        // before the body is read.
        return early_scope_check(shared, http, known);
    }
    None
}

/// Routes a request whose body is read: by method, session and era.
fn after_body<'a, S: Send + Sync + 'static>(
    shared: &'a Arc<sessions::Shared<S>>,
    http: &'a Arc<HttpRequest>,
    known: &headers::Known<'a>,
    body: &[u8],
) -> Next<'a> {
    let session_id = headers::text(known.session_id);
    let modern_header =
        headers::text(known.protocol_version).is_some_and(|v| !LEGACY_VERSIONS.contains(&v));
    let method = http.method();
    match *method {
        Method::GET => match session_id {
            Some(id) => Next::Later(Box::pin(standalone::get_stream(shared, id, http))),
            None => Next::Respond(method_not_allowed()),
        },
        Method::DELETE => match session_id {
            Some(id) => Next::Later(Box::pin(legacy::delete(shared, id, http))),
            None => Next::Respond(method_not_allowed()),
        },
        Method::POST => {
            let json = headers::text(known.content_type).is_some_and(|t| {
                t.trim()
                    .as_bytes()
                    .get(..16)
                    .is_some_and(|p| p.eq_ignore_ascii_case(b"application/json"))
            });
            if !json {
                let e = McpError::invalid_request("Unsupported Media Type: send application/json");
                let line = jsonrpc::encode_error(None, &e.to_wire(false));
                return Next::Respond(response::json(StatusCode::UNSUPPORTED_MEDIA_TYPE, line));
            }
            if !accepts_answers(known.accept) {
                let e = McpError::invalid_request(
                    "Not Acceptable: accept application/json and text/event-stream",
                );
                let line = jsonrpc::encode_error(None, &e.to_wire(false));
                return Next::Respond(response::json(StatusCode::NOT_ACCEPTABLE, line));
            }
            let message = match jsonrpc::decode_borrowed(body) {
                Ok(message) => owned(message),
                Err(e) => {
                    let line = jsonrpc::encode_error(e.id.as_ref(), &e.error.to_wire(false));
                    return Next::Respond(response::json(StatusCode::BAD_REQUEST, line));
                }
            };
            if session_id.is_none() && matches!(message, Decoded::Response { .. }) {
                let e = McpError::invalid_request(
                    "Invalid request: a response answers a server request of a 2025 session \
                     (send Mcp-Session-Id); the 2026-07-28 wire has no server-to-client requests",
                );
                let line = jsonrpc::encode_error(None, &e.to_wire(false));
                return Next::Respond(response::json(StatusCode::BAD_REQUEST, line));
            }
            // The scopes of the operation, from the body itself (both eras).
            if let Some(refused) = scope_check(shared, http, &message) {
                return Next::Respond(refused);
            }
            if let Some(peeked) = stateless_peek(
                &shared.server.envelopes,
                modern_header,
                &message,
                session_id.is_some(),
            ) {
                let request = stateless::Post {
                    http,
                    known,
                    message,
                    peeked,
                };
                stateless::post(&shared.server, &shared.config, request)
            } else {
                Next::Later(Box::pin(legacy::post(shared, session_id, http, message)))
            }
        }
        _ => Next::Respond(method_not_allowed()),
    }
}

/// A message read from a request's body: its params are kept as shared text, with what the
/// one pass over the body found in them (where each member is, `_meta`, whether it may be a
/// retry), so nothing after the routing reads them again to find those.
pub(crate) type Inbound = Decoded<Params>;

/// `message` with its params kept (copied once out of the body).
fn owned(message: jsonrpc::Borrowed<'_>) -> Inbound {
    let keep = |found| Params::from_found(Some(found));
    match message {
        Decoded::Request { id, method, params } => Decoded::Request {
            id,
            method,
            params: params.map(keep),
        },
        Decoded::Notification { method, params } => Decoded::Notification {
            method,
            params: params.map(keep),
        },
        Decoded::Response { id, outcome } => Decoded::Response { id, outcome },
    }
}

/// `403` when the token lacks the scopes of the 2026 request named by `Mcp-Method` and
/// `Mcp-Name` (checked against the body later, so a lie is refused there).
fn early_scope_check<S: Send + Sync + 'static>(
    shared: &sessions::Shared<S>,
    http: &HttpRequest,
    known: &headers::Known<'_>,
) -> Option<Response> {
    let protection = http.extensions().get::<Protection>()?;
    let method = headers::text(known.method)?;
    // Only for the methods whose `Mcp-Name` the 2026 checks compare with the body; the check
    // after decoding covers every request anyway.
    if !NAMED_METHODS.contains(&method) {
        return None;
    }
    let target = headers::text(known.name).and_then(|v| headers::decode_value(v).ok());
    let required = shared
        .server
        .server
        .required_scopes(method, target.as_deref());
    protection.check_scopes(http.principal(), &required)
}

/// `403` when the token lacks the scopes of the request in `message` (a 2025 request, whose
/// target is only in the body).
fn scope_check<S: Send + Sync + 'static>(
    shared: &sessions::Shared<S>,
    http: &HttpRequest,
    message: &Inbound,
) -> Option<Response> {
    let protection = http.extensions().get::<Protection>()?;
    let Decoded::Request { method, params, .. } = message else {
        return None;
    };
    let peeked = peek(params.as_ref().and_then(Params::text));
    let target = match &**method {
        "resources/read" => peeked.uri.as_ref(),
        _ => peeked.name.as_ref(),
    }
    .and_then(|v| v.as_str());
    if target.is_none() && NAMED_METHODS.contains(&&**method) {
        // Without a readable target its scopes cannot be checked: refused, never run.
        let e = McpError::invalid_params(format!(
            "Invalid params: {method} must name its {} as a string",
            if method == "resources/read" {
                "uri"
            } else {
                "name"
            }
        ));
        let id = match message {
            Decoded::Request { id, .. } => Some(id),
            _ => None,
        };
        return Some(response::json(
            StatusCode::BAD_REQUEST,
            jsonrpc::encode_error(id, &e.to_wire(false)),
        ));
    }
    let required = shared.server.server.required_scopes(method, target);
    protection.check_scopes(http.principal(), &required)
}

/// The methods that name a tool, prompt or resource (`Mcp-Name` on 2026).
const NAMED_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// 405 with the `Allow` header RFC 9110 requires: a GET or DELETE without a session, or a
/// method the endpoint does not serve.
fn method_not_allowed() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(axum::http::header::ALLOW, "GET, POST, DELETE")],
    )
        .into_response()
}

/// False when the request has an `Accept` header that takes neither JSON nor SSE (no header
/// means anything is acceptable, as in HTTP).
fn accepts_answers(accept: Option<&axum::http::HeaderValue>) -> bool {
    const ANSWERS: [&str; 5] = [
        "application/json",
        "text/event-stream",
        "*/*",
        "application/*",
        "text/*",
    ];
    headers::accepts(accept, &ANSWERS)
}

/// Reads the whole body within `body_timeout` and `max_body_bytes` (408 and 413 otherwise,
/// with a JSON-RPC error the client can read).
async fn read_body(config: &HttpConfig, body: axum::body::Body) -> Result<Bytes, Response> {
    let limit = config.max_body_bytes;
    let refuse = |status: StatusCode, message: String| {
        let line = jsonrpc::encode_error(None, &McpError::invalid_request(message).to_wire(false));
        response::json(status, line)
    };
    match lazy_timeout::timeout(config.body_timeout, collect(body, limit)).await {
        Some(Ok(bytes)) => Ok(bytes),
        Some(Err(Unread::TooLarge)) => Err(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request body too large: the limit is {limit} bytes"),
        )),
        Some(Err(Unread::Failed)) => Err(refuse(
            StatusCode::BAD_REQUEST,
            "Request body could not be read".to_owned(),
        )),
        None => Err(refuse(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "Request body not received within {} s",
                config.body_timeout.as_secs()
            ),
        )),
    }
}

/// Why a body was not read.
enum Unread {
    /// More than the limit (announced, or sent).
    TooLarge,
    /// The connection failed or the framing was broken.
    Failed,
}

/// The body's bytes, at most `limit` of them. A body that arrives in one frame (a small one
/// usually does) is that frame, not a copy.
async fn collect(mut body: axum::body::Body, limit: usize) -> Result<Bytes, Unread> {
    use http_body_util::BodyExt;
    let limit = u64::try_from(limit).unwrap_or(u64::MAX);
    if axum::body::HttpBody::size_hint(&body).lower() > limit {
        return Err(Unread::TooLarge);
    }
    let mut first: Option<Bytes> = None;
    let mut joined: Option<Vec<u8>> = None;
    let mut read: u64 = 0;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(|_| Unread::Failed)?.into_data() else {
            continue; // trailers
        };
        read = read.saturating_add(data.len() as u64);
        if read > limit {
            return Err(Unread::TooLarge);
        }
        match (&mut joined, first.take()) {
            (Some(joined), _) => joined.extend_from_slice(&data),
            (None, None) => first = Some(data),
            (None, Some(earlier)) => {
                let mut both = Vec::with_capacity(earlier.len() + data.len());
                both.extend_from_slice(&earlier);
                both.extend_from_slice(&data);
                joined = Some(both);
            }
        }
    }
    Ok(match joined {
        Some(joined) => Bytes::from(joined),
        None => first.unwrap_or_default(),
    })
}

/// For a 2026 message (a `_meta` protocol version in the body, or a version header newer than
/// the 2025 ones, `newer_header`; both when it also names a session), the routed parts of its
/// params, read once for the checks that follow.
fn stateless_peek(
    envelopes: &crate::era::EnvelopeCache,
    newer_header: bool,
    message: &Inbound,
    in_session: bool,
) -> Option<Peeked> {
    let params = match message {
        Decoded::Request { params, .. } | Decoded::Notification { params, .. } => params,
        Decoded::Response { .. } => return None,
    };
    let mut peeked = peek(params.as_ref().and_then(Params::text));
    // Read once here, for the routing, the 2026 checks and the engine.
    peeked.envelope = envelopes.read(peeked.meta.as_ref());
    let has_envelope = peeked.envelope.is_some();
    let modern = if in_session {
        has_envelope && newer_header
    } else {
        has_envelope || newer_header
    };
    modern.then_some(peeked)
}
