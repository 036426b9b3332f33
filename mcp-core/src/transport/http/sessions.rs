//! The 2025-11-25 sessions of the HTTP endpoint: the map from `Mcp-Session-Id` to session, each
//! client's share of them, ownership by principal, idle expiry.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::{mpsc, Semaphore};

use super::config::HttpConfig;
use super::events::EventStore;
use crate::engine::dispatch::run_hooks;
use crate::engine::RunningServer;
use crate::error::McpError;
use crate::jsonrpc::RequestId;
use crate::lowlevel::{HttpRequest, Session};
use crate::peer::RunningRequests;

/// One 2025-11-25 session: the engine's `Session`, its event store and standalone stream, the
/// requests it runs, who opened it.
pub(crate) struct HttpSession {
    pub(super) session: Session,
    pub(super) store: Arc<EventStore>,
    pub(super) standalone_seq: std::sync::atomic::AtomicU64,
    pub(super) standalone: Mutex<Option<mpsc::Receiver<String>>>,
    pub(super) last_seen: Mutex<Instant>,
    pub(super) in_flight: RunningRequests,
    /// Ids of the requests running (or about to), so a second request with one is refused.
    pub(super) ids: Mutex<HashSet<RequestId>>,
    /// Requests running at once ([`ServerOptions::max_in_flight`](crate::lowlevel::ServerOptions)).
    pub(super) slots: Arc<Semaphore>,
    /// The identity of the principal that opened the session (`None`: an open endpoint).
    pub(super) owner: Option<String>,
    /// Whose share of the sessions this one counts in ([`HttpConfig::max_sessions_per_client`]).
    pub(super) client: Option<String>,
}

/// The open sessions, and how many each client holds (counting `initialize`s under way).
#[derive(Default)]
pub(super) struct Sessions {
    pub(super) map: HashMap<String, Arc<HttpSession>>,
    pub(super) reserved: usize,
    pub(super) per_client: HashMap<String, usize>,
}

impl Sessions {
    pub(super) fn remove(&mut self, id: &str) -> Option<Arc<HttpSession>> {
        let session = self.map.remove(id)?;
        if let Some(client) = &session.client {
            self.release(client);
        }
        Some(session)
    }

    pub(super) fn release(&mut self, client: &str) {
        if let Some(n) = self.per_client.get_mut(client) {
            *n -= 1;
            if *n == 0 {
                self.per_client.remove(client);
            }
        }
    }
}

/// What every request of the endpoint shares: the running server, the settings, the sessions.
pub(crate) struct Shared<S> {
    pub(crate) server: Arc<RunningServer<S>>,
    pub(crate) config: HttpConfig,
    pub(super) sessions: Mutex<Sessions>,
    /// Bytes held by every session's event store.
    pub(super) event_bytes: Arc<AtomicUsize>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// 128 bits from the OS CSPRNG as 32 hex characters (visible ASCII only).
pub(super) fn new_session_id() -> Result<String, McpError> {
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
    pub(super) fn get(&self, id: &str, http: &HttpRequest) -> Option<Arc<HttpSession>> {
        let session = lock(&self.sessions).map.get(id).cloned()?;
        let caller = http.principal().map(|p| p.identity());
        if session.owner != caller {
            tracing::warn!("refused a request for a session opened by another principal");
            return None;
        }
        Some(session)
    }

    /// Ends `session`. `cancel`: its running requests end with it (DELETE and expiry: a
    /// client cannot keep handlers running past its share of sessions and requests); at
    /// shutdown they finish instead, as `serve_http_on` promises.
    pub(super) fn end(&self, session: &HttpSession, cancel: bool) {
        if cancel {
            session.in_flight.cancel_where(|_| true);
        }
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
            self.end(&session, false);
        }
    }

    pub(super) fn expire(&self) {
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
            self.end(&session, true);
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

/// Whose share of the sessions a request counts in: its principal, else its peer's address
/// (`None`, no share, when neither is known, as behind a router without connection info).
pub(super) fn client_of(http: &HttpRequest) -> Option<String> {
    match http.principal() {
        Some(principal) => Some(format!("principal:{}", principal.identity())),
        None => http.peer_addr().map(|peer| format!("ip:{}", peer.ip())),
    }
}

/// A session slot held while `initialize` runs (given back unless the session opens).
pub(super) struct Reservation<'a, S> {
    pub(super) shared: &'a Shared<S>,
    pub(super) client: Option<String>,
    pub(super) kept: bool,
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
pub(super) fn reserve<'a, S: Send + Sync + 'static>(
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
