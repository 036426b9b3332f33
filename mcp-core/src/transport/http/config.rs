//! [`HttpConfig`]: limits and allow-lists of the HTTP endpoint. Every default is named here.

use std::time::Duration;

/// Limits and allow-lists of the HTTP endpoint.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Accepted `Host` names (without port); empty accepts any. Default: the loopback names
    /// `localhost`, `127.0.0.1`, `[::1]`. [`serve_http_on`](super::serve_http_on) bound to a
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
    /// The path [`serve_http`](super::serve_http) serves at. Default `/mcp`.
    pub path: String,
    /// 2025 sessions open at once; an `initialize` beyond it gets 503. Default 10,000.
    pub max_sessions: usize,
    /// OAuth 2.1 protection: Protected Resource Metadata, bearer tokens, scopes, audience.
    /// Default `None`: the endpoint is open (anyone who can reach it may call it).
    pub auth: Option<crate::auth::ResourceServer>,
}

pub(crate) fn loopback() -> Vec<String> {
    ["localhost", "127.0.0.1", "[::1]", "::1"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

impl HttpConfig {
    /// Protects the endpoint with `auth` (see [`ResourceServer`](crate::auth::ResourceServer)).
    pub fn auth(mut self, auth: crate::auth::ResourceServer) -> Self {
        self.auth = Some(auth);
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
            auth: None,
        }
    }
}
