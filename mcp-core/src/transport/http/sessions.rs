//! The 2025-11-25 sessions of the HTTP endpoint: the map from `Mcp-Session-Id` to session, each
//! client's share of them, ownership by principal, idle expiry.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Semaphore;

use super::config::HttpConfig;
use super::events::EventStore;
use super::store::SessionRecord;
use crate::error::McpError;
use crate::jsonrpc::RequestId;
use crate::lowlevel::dispatch::{close_hooks_soon, run_hooks};
use crate::lowlevel::RunningServer;
use crate::lowlevel::{HttpRequest, Session};
use crate::peer::RunningRequests;

/// One 2025-11-25 session: the engine's `Session`, its event store and standalone stream, the
/// requests it runs, who opened it.
pub(crate) struct HttpSession {
    pub(super) session: Session,
    pub(super) store: Arc<EventStore>,
    pub(super) standalone_seq: std::sync::atomic::AtomicU64,
    pub(super) standalone: Mutex<Option<crate::lowlevel::Outbox>>,
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
    /// When it was opened (ms since the Unix epoch).
    pub(super) created_ms: u64,
    /// What was last written to the session store ([`HttpConfig::session_store`]).
    pub(super) saved: Mutex<Option<SessionRecord>>,
}

impl HttpSession {
    /// The session as a [`SessionRecord`] (`None` before its handshake is done).
    pub(super) fn record(&self) -> Option<SessionRecord> {
        let s = &self.session;
        Some(SessionRecord {
            id: s.id().to_owned(),
            protocol_version: s.protocol_version()?.to_string(),
            client_info: s.client_info().map(|i| (*i).clone()),
            client_capabilities: (*s.client_capabilities()).clone(),
            log_level: s.log_level(),
            subscriptions: s.subscriptions(),
            client_ready: s.client_ready(),
            owner: self.owner.clone(),
            client: self.client.clone(),
            created_at_ms: self.created_ms,
        })
    }

    /// Takes what another replica changed in the session since this one last saw its record
    /// (`current`, just read from the store): per field, a change made here since then (not
    /// yet saved) wins, else the store's value is taken; subscriptions merge URI by URI;
    /// readiness only ever turns on. `current` becomes what this replica last saw, so its
    /// next save writes only the changes made here. The merge happens under the session's
    /// lock ([`Session::merge_stored`]): a change made here meanwhile is not lost. A record of
    /// another session is refused (an error, nothing taken).
    pub(super) fn refresh(&self, current: SessionRecord) -> Result<(), McpError> {
        check_id(self.session.id(), &current)?;
        let mut saved = lock(&self.saved);
        if saved.as_ref() == Some(&current) {
            return Ok(());
        }
        let seen = saved.as_ref();
        // The session's set is what decides who hears `resources/updated`
        // (server/subscriptions.rs), so URIs merged here are delivered here from now on.
        self.session.merge_stored(
            current.protocol_version.as_str().into(),
            current.client_ready,
            |local, mine| match seen {
                None => (
                    current.log_level,
                    current.subscriptions.iter().cloned().collect(),
                ),
                Some(seen) => {
                    let level = if local != seen.log_level {
                        local
                    } else {
                        current.log_level
                    };
                    let uris: BTreeSet<&String> = mine
                        .iter()
                        .chain(&seen.subscriptions)
                        .chain(&current.subscriptions)
                        .collect();
                    let subscriptions = uris
                        .into_iter()
                        .filter(|uri| {
                            let here = mine.contains(*uri);
                            if here != seen.subscriptions.contains(uri) {
                                here
                            } else {
                                current.subscriptions.contains(uri)
                            }
                        })
                        .cloned()
                        .collect();
                    (level, subscriptions)
                }
            },
        );
        *saved = Some(current);
        Ok(())
    }
}

/// Refuses a store's record of another session than `id` (a store answering the wrong
/// command must not mix sessions' data).
fn check_id(id: &str, record: &SessionRecord) -> Result<(), McpError> {
    if record.id == id {
        return Ok(());
    }
    tracing::error!(
        session = id,
        "the session store answered with another session's record"
    );
    Err(McpError::internal(
        "the session store answered with another session's record",
    ))
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

impl<S: Send + Sync + 'static> Shared<S> {
    pub(crate) fn new(server: Arc<RunningServer<S>>, config: HttpConfig) -> Self {
        Self {
            server,
            config,
            sessions: Mutex::new(Sessions::default()),
            event_bytes: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// A new session `id` of this replica (not yet in the map), with its standalone queue
    /// and event store.
    pub(super) fn new_session(
        &self,
        id: &str,
        owner: Option<String>,
        client: Option<String>,
        created_ms: u64,
    ) -> Arc<HttpSession> {
        let (outbound, standalone) = crate::lowlevel::Sink::channel(self.config.session_queue);
        let session = Session::with_id(id.into(), outbound);
        let (session_bytes, total_bytes) = (
            self.config.event_store_session_bytes,
            self.config.event_store_total_bytes,
        );
        let store = match &self.config.event_store {
            Some(shared) => EventStore::mirrored(
                session_bytes,
                total_bytes,
                self.event_bytes.clone(),
                shared.clone(),
                id.to_owned(),
            ),
            None => EventStore::new(session_bytes, total_bytes, self.event_bytes.clone()),
        };
        Arc::new(HttpSession {
            session,
            store: Arc::new(store),
            standalone_seq: std::sync::atomic::AtomicU64::new(0),
            standalone: Mutex::new(Some(standalone)),
            last_seen: Mutex::new(Instant::now()),
            in_flight: RunningRequests::default(),
            ids: Mutex::new(HashSet::new()),
            slots: Arc::new(Semaphore::new(
                self.server
                    .server
                    .options
                    .max_in_flight
                    .clamp(1, Semaphore::MAX_PERMITS),
            )),
            owner,
            client,
            created_ms,
            saved: Mutex::new(None),
        })
    }

    /// Session `id`, if it exists and belongs to the request's principal: another caller's
    /// token gets the same answer as an unknown id (404), so ids cannot be probed.
    ///
    /// With a [`session_store`](HttpConfig::session_store) the store decides: every lookup
    /// asks it (and so keeps the session alive on every replica); a session it no longer has
    /// (deleted or expired through another replica) is dropped here too, one this replica
    /// does not hold yet is rebuilt from its record, and one it holds takes what other
    /// replicas changed since ([`HttpSession::refresh`]). Fails only when the store does.
    pub(super) async fn get(
        &self,
        id: &str,
        http: &HttpRequest,
    ) -> Result<Option<Arc<HttpSession>>, McpError> {
        let local = lock(&self.sessions).map.get(id).cloned();
        let caller = http.principal().map(|p| p.identity());
        let session = match &self.config.session_store {
            None => local,
            Some(store) => {
                let record = self.load(store.as_ref(), id).await?;
                match record {
                    None => {
                        let gone = lock(&self.sessions).remove(id);
                        if let Some(gone) = gone {
                            tracing::debug!(session = id, "session ended on another replica");
                            self.end(&gone, true);
                        }
                        None
                    }
                    Some(record) => match local {
                        Some(local) => {
                            local.refresh(record)?;
                            Some(local)
                        }
                        None if record.owner != caller => None,
                        None => Some(self.rebuild(record)),
                    },
                }
            }
        };
        let Some(session) = session else {
            return Ok(None);
        };
        if session.owner != caller {
            tracing::warn!("refused a request for a session opened by another principal");
            return Ok(None);
        }
        Ok(Some(session))
    }

    /// The store's record of session `id` (which it keeps alive), refused when it is
    /// another session's.
    async fn load(
        &self,
        store: &dyn super::SessionStore,
        id: &str,
    ) -> Result<Option<SessionRecord>, McpError> {
        let record = store.load(id, self.config.session_idle_timeout).await?;
        if let Some(record) = &record {
            check_id(id, record)?;
        }
        Ok(record)
    }

    /// Takes into `session`, held here, what other replicas changed in it since
    /// ([`HttpSession::refresh`]), as a lookup does; the session is kept alive in the store.
    /// `false` when the store no longer has it (deleted or expired through another replica):
    /// it is ended here too. `true` without a session store.
    pub(super) async fn reload(&self, session: &Arc<HttpSession>) -> Result<bool, McpError> {
        let Some(store) = &self.config.session_store else {
            return Ok(true);
        };
        let id = session.session.id();
        match self.load(store.as_ref(), id).await? {
            Some(record) => {
                session.refresh(record)?;
                Ok(true)
            }
            None => {
                let gone = {
                    let mut sessions = lock(&self.sessions);
                    let ours = sessions
                        .map
                        .get(id)
                        .is_some_and(|held| Arc::ptr_eq(held, session));
                    if ours {
                        sessions.remove(id)
                    } else {
                        None
                    }
                };
                if let Some(gone) = gone {
                    tracing::debug!(session = id, "session ended on another replica");
                    self.end(&gone, true);
                }
                Ok(false)
            }
        }
    }

    /// Serves here a session another replica opened (its record from the store).
    fn rebuild(&self, record: SessionRecord) -> Arc<HttpSession> {
        let fresh = self.new_session(
            &record.id,
            record.owner.clone(),
            record.client.clone(),
            record.created_at_ms,
        );
        fresh.session.restore(
            record.protocol_version.as_str().into(),
            record.client_info.clone().map(Arc::new),
            Arc::new(record.client_capabilities.clone()),
            record.log_level,
            record.subscriptions.clone(),
            record.client_ready,
        );
        *lock(&fresh.saved) = Some(record);
        let session = {
            let mut sessions = lock(&self.sessions);
            if let Some(raced) = sessions.map.get(fresh.session.id()) {
                // Another request rebuilt it meanwhile.
                return raced.clone();
            }
            if let Some(client) = &fresh.client {
                *sessions.per_client.entry(client.clone()).or_insert(0) += 1;
            }
            sessions
                .map
                .insert(fresh.session.id().to_owned(), fresh.clone());
            fresh
        };
        tracing::debug!(
            session = session.session.id(),
            "session opened on another replica is now served here too"
        );
        if session.session.begin() {
            run_hooks(&self.server.server.on_connect, &session.session);
        }
        session
    }

    /// Writes the session to the store when it changed here since last written or read (log
    /// level, subscriptions, `notifications/initialized`). A session already in the store is
    /// read first and takes what other replicas changed meanwhile
    /// ([`HttpSession::refresh`]), so that writing it does not undo their changes; one the
    /// store no longer has (deleted or expired through another replica) is not brought back.
    pub(super) async fn save(&self, session: &HttpSession) -> Result<(), McpError> {
        let Some(store) = &self.config.session_store else {
            return Ok(());
        };
        let Some(mut record) = session.record() else {
            return Ok(());
        };
        let seen = lock(&session.saved).clone();
        if seen.as_ref() == Some(&record) {
            return Ok(());
        }
        let idle = self.config.session_idle_timeout;
        if seen.is_some() {
            let Some(current) = self.load(store.as_ref(), &record.id).await? else {
                return Ok(());
            };
            session.refresh(current)?;
            match session.record() {
                Some(merged) => record = merged,
                None => return Ok(()),
            }
            if lock(&session.saved).as_ref() == Some(&record) {
                return Ok(());
            }
        }
        store.save(&record, idle).await?;
        *lock(&session.saved) = Some(record);
        Ok(())
    }

    /// Deletes session `id` (`DELETE`): here and, with stores, for every replica.
    pub(super) async fn delete(&self, id: &str) -> Result<bool, McpError> {
        let removed = lock(&self.sessions).remove(id);
        let existed = removed.is_some();
        if let Some(session) = removed {
            self.end(&session, true);
        }
        if let Some(events) = &self.config.event_store {
            events.remove(id).await?;
        }
        match &self.config.session_store {
            Some(store) => Ok(store.remove(id).await? || existed),
            None => Ok(existed),
        }
    }

    /// Ends `session`. `cancel`: its running requests end with it (DELETE and expiry: a
    /// client cannot keep handlers running past its share of sessions and requests); at
    /// shutdown they finish instead, as `serve_http_on` promises.
    pub(super) fn end(&self, session: &HttpSession, cancel: bool) {
        if cancel {
            session.in_flight.cancel_where(|_| true);
        }
        // Ends an open standalone GET stream.
        let _ = session
            .session
            .outbound_sender()
            .try_send(crate::lowlevel::Outbound::Close);
        session.session.mark_closed();
        if session.session.was_connected() {
            close_hooks_soon(&self.server, &session.session);
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

/// Delivers the answers other replicas forward ([`SessionStore::forward_answer`]) to the
/// server-to-client requests of this replica that wait for them.
///
/// [`SessionStore::forward_answer`]: super::SessionStore::forward_answer
pub(crate) fn spawn_answers<S: Send + Sync + 'static>(shared: &Arc<Shared<S>>) {
    let Some(mut answers) = shared
        .config
        .session_store
        .as_ref()
        .and_then(|store| store.answers())
    else {
        return;
    };
    let weak = Arc::downgrade(shared);
    tokio::spawn(async move {
        loop {
            let (id, answer) = match answers.recv().await {
                Ok(forwarded) => forwarded,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "forwarded answers were missed");
                    continue;
                }
                Err(_) => break,
            };
            let Some(shared) = weak.upgrade() else { break };
            let session = lock(&shared.sessions).map.get(&id).cloned();
            let Some(session) = session else { continue };
            if let Ok(crate::jsonrpc::Message::Response { id, outcome }) =
                crate::jsonrpc::decode(answer.as_bytes())
            {
                session.session.resolve(&id, outcome);
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::lowlevel::Server;
    use crate::transport::http::store::{now_ms, SessionStore};
    use crate::transport::http::MemorySessionStore;
    use crate::types::{ClientCapabilities, LoggingLevel};

    const IDLE: Duration = Duration::from_secs(60);

    #[tokio::test]
    async fn a_save_keeps_what_another_replica_changed_meanwhile_and_revives_nothing() {
        let store = MemorySessionStore::default();
        let running = RunningServer::start(Server::new("b")).await.unwrap();
        let b = Shared::new(running, HttpConfig::default().session_store(store.clone()));
        let opened = SessionRecord {
            id: "0123456789abcdef0123456789abcdef".into(),
            protocol_version: "2025-11-25".into(),
            client_info: None,
            client_capabilities: ClientCapabilities::default(),
            log_level: None,
            subscriptions: vec!["file:///a".into()],
            client_ready: true,
            owner: None,
            client: None,
            created_at_ms: now_ms(),
        };
        store.save(&opened, IDLE).await.unwrap();
        let held = b.rebuild(opened.clone());

        // While a request on B subscribes to /b, A sets the level and drops /a.
        held.session.set_subscribed("file:///b", true);
        let theirs = SessionRecord {
            log_level: Some(LoggingLevel::Warning),
            subscriptions: Vec::new(),
            ..opened.clone()
        };
        store.save(&theirs, IDLE).await.unwrap();
        b.save(&held).await.unwrap();
        let stored = store.load(&opened.id, IDLE).await.unwrap().unwrap();
        assert_eq!(stored.log_level, Some(LoggingLevel::Warning));
        assert_eq!(stored.subscriptions, vec!["file:///b".to_owned()]);
        assert_eq!(held.session.log_level(), Some(LoggingLevel::Warning));
        assert_eq!(held.session.subscriptions(), vec!["file:///b".to_owned()]);

        // Deleted through A: a later change on B does not bring it back.
        assert!(store.remove(&opened.id).await.unwrap());
        held.session.set_log_level(LoggingLevel::Error);
        b.save(&held).await.unwrap();
        assert_eq!(store.load(&opened.id, IDLE).await.unwrap(), None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_subscription_made_here_during_a_refresh_is_kept() {
        let running = RunningServer::start(Server::new("b")).await.unwrap();
        let store = MemorySessionStore::default();
        let b = Shared::new(running, HttpConfig::default().session_store(store));
        let opened = SessionRecord {
            id: "0123456789abcdef0123456789abcdef".into(),
            protocol_version: "2025-11-25".into(),
            client_info: None,
            client_capabilities: ClientCapabilities::default(),
            log_level: None,
            subscriptions: Vec::new(),
            client_ready: true,
            owner: None,
            client: None,
            created_at_ms: now_ms(),
        };
        let held = b.rebuild(opened.clone());
        // Other replicas keep changing the level while requests here subscribe.
        let records: Vec<SessionRecord> = [LoggingLevel::Warning, LoggingLevel::Error]
            .into_iter()
            .map(|level| SessionRecord {
                log_level: Some(level),
                ..opened.clone()
            })
            .collect();
        let done = std::sync::atomic::AtomicBool::new(false);
        // Subscribes for 300 ms at most (so the test stays short on a busy machine).
        let until = Instant::now() + Duration::from_millis(300);
        let subscribed = std::thread::scope(|scope| {
            scope.spawn(|| {
                for i in 0.. {
                    if done.load(std::sync::atomic::Ordering::Acquire) {
                        break;
                    }
                    held.refresh(records[i % 2].clone()).unwrap();
                }
            });
            let mut n = 0;
            while n < 3_000 && Instant::now() < until {
                held.session.set_subscribed(&format!("file:///{n}"), true);
                n += 1;
            }
            done.store(true, std::sync::atomic::Ordering::Release);
            n
        });
        assert!(subscribed > 0);
        assert_eq!(held.session.subscriptions().len(), subscribed, "none lost");
    }

    /// A store that answers every load with the record of another session.
    #[derive(Debug)]
    struct Confused(SessionRecord);

    impl SessionStore for Confused {
        fn save<'a>(
            &'a self,
            _: &'a SessionRecord,
            _: Duration,
        ) -> crate::transport::http::store::StoreFuture<'a, ()> {
            Box::pin(std::future::ready(Ok(())))
        }
        fn load<'a>(
            &'a self,
            _: &'a str,
            _: Duration,
        ) -> crate::transport::http::store::StoreFuture<'a, Option<SessionRecord>> {
            Box::pin(std::future::ready(Ok(Some(self.0.clone()))))
        }
        fn remove<'a>(
            &'a self,
            _: &'a str,
        ) -> crate::transport::http::store::StoreFuture<'a, bool> {
            Box::pin(std::future::ready(Ok(true)))
        }
    }

    #[tokio::test]
    async fn a_record_of_another_session_is_refused() {
        let running = RunningServer::start(Server::new("b")).await.unwrap();
        let mine = SessionRecord {
            id: "0123456789abcdef0123456789abcdef".into(),
            protocol_version: "2025-11-25".into(),
            client_info: None,
            client_capabilities: ClientCapabilities::default(),
            log_level: None,
            subscriptions: vec!["file:///mine".into()],
            client_ready: true,
            owner: None,
            client: None,
            created_at_ms: now_ms(),
        };
        let theirs = SessionRecord {
            id: "fedcba9876543210fedcba9876543210".into(),
            log_level: Some(LoggingLevel::Debug),
            subscriptions: vec!["file:///theirs".into()],
            ..mine.clone()
        };
        let b = Shared::new(
            running,
            HttpConfig::default().session_store(Confused(theirs.clone())),
        );
        let held = b.rebuild(mine.clone());
        assert!(held.refresh(mine.clone()).is_ok());
        assert!(held.refresh(theirs).is_err());
        held.session.set_log_level(LoggingLevel::Error);
        let refused = b.save(&held).await;
        assert!(refused.is_err(), "{refused:?}");
        assert!(b.reload(&held).await.is_err());
        assert_eq!(
            held.session.subscriptions(),
            vec!["file:///mine".to_owned()]
        );
        assert_eq!(held.session.log_level(), Some(LoggingLevel::Error));
    }
}
