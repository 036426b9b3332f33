//! [`HttpConfig`]: limits and allow-lists of the HTTP endpoint. Every default is named here.

use std::time::Duration;

/// Limits and allow-lists of the HTTP endpoint.
///
/// New settings may be added in a minor release: start from the defaults and change fields in
/// place.
///
/// ```
/// use modelctx_core::transport::HttpConfig;
///
/// let mut config = HttpConfig::default();
/// config.max_sessions = 1_000;
/// config.path = "/api/mcp".into();
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// Accepted `Host` names (without port); empty accepts any. Default: the loopback names
    /// `localhost`, `127.0.0.1`, `[::1]`. `serve_http_on` bound to a
    /// non-loopback address empties the default lists (name your hosts to keep the check).
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` hosts (without scheme and port); empty accepts any; a request without
    /// `Origin` is accepted, an opaque `null` Origin is not. Default: the loopback names.
    pub allowed_origins: Vec<String>,
    /// Largest request body; larger ones get 413. Default 4 MiB.
    pub max_body_bytes: usize,
    /// Longest time a client may take to send a request body; slower ones get 408. Default 30 s.
    pub body_timeout: Duration,
    /// Longest time one request may run before it is cancelled. Default 300 s.
    pub request_timeout: Duration,
    /// A 2025 session unused this long is ended (later requests get 404). Default 30 min.
    pub session_idle_timeout: Duration,
    /// Messages queued for a session's standalone GET stream before senders wait.
    /// Default 256.
    pub session_queue: usize,
    /// The path `serve_http` serves at. Default `/mcp`.
    pub path: String,
    /// 2025 sessions open at once; an `initialize` beyond it gets 503. Default 10,000.
    pub max_sessions: usize,
    /// 2025 sessions one client may hold at once (a client is the authenticated principal, or
    /// else the peer's IP address), so that one peer cannot take every session: an
    /// `initialize` beyond it gets 503 with a JSON-RPC error (-32603). Default 0, which means
    /// an eighth of [`max_sessions`](Self::max_sessions) (at least 1): 1,250 with the default
    /// cap. Behind a reverse proxy every client has the proxy's address: authenticate, or
    /// raise this.
    pub max_sessions_per_client: usize,
    /// Bytes of SSE events one 2025 session keeps for `Last-Event-ID` replay (at most
    /// 1,024 events in any case); the oldest go first, and a replay asking for dropped events
    /// gets 410 Gone with a JSON-RPC error. An event larger than this is sent but not kept.
    /// Default 4 MiB.
    pub event_store_session_bytes: usize,
    /// Bytes of replayable events kept across every session of the endpoint; a session that
    /// would go past it drops its own oldest events (or does not keep the new one). Default
    /// 64 MiB.
    pub event_store_total_bytes: usize,
    /// Bytes of SSE frames queued for one response body that the client has not read yet;
    /// past it the request's messages wait (a 2025 request keeps running and stores its events
    /// for replay). Default 1 MiB.
    pub stream_buffer_bytes: usize,
    /// A response the client does not read for this long is given up: the body ends and
    /// (under `serve_http_on`) the connection is closed. A 2025
    /// request goes on and stores its events for a `Last-Event-ID` replay. Default 30 s.
    pub write_timeout: Duration,
    /// `serve_http_on`: how long a client may take to send a request's
    /// headers, counted from when the server starts waiting for them, which is also how long
    /// an idle keep-alive connection is kept waiting for its next request; then the connection
    /// is closed. Default 30 s.
    pub header_read_timeout: Duration,
    /// `serve_http_on`: connections served at once. At the cap the
    /// server stops accepting until one closes (new clients wait in the listen backlog).
    /// Default 512 (keep it below the process's open-files limit).
    pub max_connections: usize,
    /// Connections one client (an IPv4 address, an IPv6 /64) may hold at once under
    /// `serve_http_on`; more are closed as soon as they are accepted. `0` (the default) means
    /// half of [`max_connections`](Self::max_connections) (256 by default): one peer cannot
    /// hold every connection and lock the others out, while a client pooling many concurrent
    /// requests (one connection each on HTTP/1.1) still gets plenty.
    pub max_connections_per_client: usize,
    /// OAuth 2.1 protection: Protected Resource Metadata, bearer tokens, scopes, audience.
    /// Default `None`: the endpoint is open (anyone who can reach it may call it).
    pub auth: Option<crate::auth::ResourceServer>,
    /// Where 2025 sessions are kept so that every replica behind a load balancer can serve
    /// them ([`MemorySessionStore`](super::MemorySessionStore), or `RedisStore` with the
    /// `redis` feature). Default `None`: sessions live in this process only. The limits
    /// ([`max_sessions`](Self::max_sessions), per client) count the sessions this replica
    /// holds.
    pub session_store: Option<std::sync::Arc<dyn super::SessionStore>>,
    /// Where the resumable SSE events of 2025 sessions are also written, so a `Last-Event-ID`
    /// on any replica replays a stream another one started. Default `None`: events live in
    /// this process only (bounded by [`event_store_session_bytes`](Self::event_store_session_bytes)
    /// and [`event_store_total_bytes`](Self::event_store_total_bytes), which bound this
    /// replica's copy in any case).
    ///
    /// Events are written to the shared store in the background, in order, through a queue of
    /// at most 1,024 writes and [`event_store_session_bytes`](Self::event_store_session_bytes)
    /// per session. When the store falls that far behind (slow or unreachable), what does not
    /// fit is dropped, with one warning each time a session's queue fills up: the stream that
    /// lost an event is written no further and is marked finished there once what was queued
    /// before is written, so a `Last-Event-ID` replay on another replica gets that stream's
    /// start and then ends, never a stream with a gap passed off as whole. A write the store
    /// fails (an outage, an error) makes its stream lossy the same way: the stream is written
    /// no further and is finished there at once (the finish tried up to three times). This
    /// replica's own copy is not affected: a replay here gets every event it still holds.
    pub event_store: Option<std::sync::Arc<dyn super::EventStore>>,
    /// With a [`session_store`](Self::session_store): while a session's standalone GET stream
    /// is open on this replica, the session is read from the store this often, so that what
    /// the client changed through other replicas (a `resources/subscribe`, its log level)
    /// applies to that stream even when no request reaches this replica. Each read also keeps
    /// the session alive in the store, as a request would (an open stream is a session in
    /// use), and a session deleted or expired through another replica is ended here, which
    /// ends the stream. Default 5 s.
    pub session_refresh: Duration,
    /// A comment line (`: keep-alive`) is written on every open SSE stream (2025 GET and POST
    /// streams, `Last-Event-ID` replays, 2026 answer and `subscriptions/listen` streams) after
    /// this much silence, so that proxies and load balancers do not cut idle streams. A comment
    /// is no event: it carries no id and is never replayed. `None` sends none. Default 15 s.
    pub keep_alive: Option<Duration>,
}

pub(crate) fn loopback() -> Vec<String> {
    ["localhost", "127.0.0.1", "[::1]", "::1"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

impl HttpConfig {
    /// The share of one client: [`max_sessions_per_client`](Self::max_sessions_per_client),
    /// or an eighth of [`max_sessions`](Self::max_sessions) when it is 0.
    pub(crate) fn sessions_per_client(&self) -> usize {
        match self.max_sessions_per_client {
            0 => (self.max_sessions / 8).max(1),
            n => n,
        }
    }

    /// Sets [`session_store`](Self::session_store).
    ///
    /// ```
    /// use modelctx_core::transport::{HttpConfig, MemoryEventStore, MemorySessionStore};
    ///
    /// let config = HttpConfig::default()
    ///     .session_store(MemorySessionStore::default())
    ///     .event_store(MemoryEventStore::default());
    /// assert!(config.session_store.is_some() && config.event_store.is_some());
    /// ```
    pub fn session_store(mut self, store: impl super::SessionStore) -> Self {
        self.session_store = Some(std::sync::Arc::new(store));
        self
    }

    /// Sets [`event_store`](Self::event_store).
    pub fn event_store(mut self, store: impl super::EventStore) -> Self {
        self.event_store = Some(std::sync::Arc::new(store));
        self
    }

    /// Protects the endpoint with `auth` (see [`ResourceServer`](crate::auth::ResourceServer)).
    pub fn auth(mut self, auth: crate::auth::ResourceServer) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Sets [`keep_alive`](Self::keep_alive): the silence after which an open SSE stream gets
    /// a `: keep-alive` comment line; `None` turns keep-alive comments off.
    ///
    /// ```
    /// use std::time::Duration;
    /// use modelctx_core::transport::HttpConfig;
    ///
    /// let config = HttpConfig::default().keep_alive(Some(Duration::from_secs(25)));
    /// assert_eq!(config.keep_alive, Some(Duration::from_secs(25)));
    /// assert_eq!(HttpConfig::default().keep_alive(None).keep_alive, None);
    /// ```
    pub fn keep_alive(mut self, every: Option<Duration>) -> Self {
        self.keep_alive = every;
        self
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            allowed_hosts: loopback(),
            allowed_origins: loopback(),
            max_body_bytes: 4 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(300),
            session_idle_timeout: Duration::from_secs(30 * 60),
            session_queue: 256,
            path: "/mcp".to_owned(),
            max_sessions: 10_000,
            max_sessions_per_client: 0,
            event_store_session_bytes: 4 * 1024 * 1024,
            event_store_total_bytes: 64 * 1024 * 1024,
            stream_buffer_bytes: 1024 * 1024,
            write_timeout: Duration::from_secs(30),
            header_read_timeout: Duration::from_secs(30),
            max_connections: 512,
            max_connections_per_client: 0,
            auth: None,
            session_store: None,
            event_store: None,
            session_refresh: Duration::from_secs(5),
            keep_alive: Some(Duration::from_secs(15)),
        }
    }
}
