//! Where 2025-11-25 sessions and their resumable SSE events live when several replicas serve
//! one endpoint: [`SessionStore`] and [`EventStore`], with in-memory implementations
//! ([`MemorySessionStore`], [`MemoryEventStore`]) and Redis ones (`RedisStore`, cargo feature
//! `redis`).
//!
//! Without a store ([`HttpConfig::session_store`] and [`HttpConfig::event_store`] unset, the
//! default) sessions and events live in the process that opened them, as they always did. With
//! stores shared by every replica, a session opened on one replica is served by any other: the
//! replica that gets a request for a session it does not hold rebuilds it from the
//! [`SessionRecord`], and a `GET` with `Last-Event-ID` replays events another replica wrote.
//!
//! What stays with one replica: the requests it runs (a `notifications/cancelled` posted to
//! another replica does not reach them; they end with their timeout), the server-to-client
//! requests it sent (`sampling/createMessage`, `elicitation/create`, `roots/list`: a client's
//! answer posted to another replica is forwarded to every replica through
//! [`SessionStore::forward_answer`], which both stores here implement, and the one waiting
//! takes it; with a store that does not, the answer must reach the replica that asked), the
//! standalone GET stream (stream `0`: its events are kept by the replica serving it only, and
//! a session deleted on another replica ends it at that replica's next look at the session),
//! and the limits ([`HttpConfig::max_sessions`] counts the sessions this replica holds; one
//! rebuilt from the store is never refused).
//!
//! [`HttpConfig::max_sessions`]: super::HttpConfig::max_sessions
//!
//! [`HttpConfig::session_store`]: super::HttpConfig::session_store
//! [`HttpConfig::event_store`]: super::HttpConfig::event_store

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::events::{self, Resume};
use crate::error::McpError;
use crate::types::{ClientCapabilities, Implementation, LoggingLevel};

/// The future a store method returns (boxed, so the traits stay object-safe).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, McpError>> + Send + 'a>>;

/// What a 2025-11-25 session is, as kept in a [`SessionStore`]: enough for any replica to
/// serve it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The `Mcp-Session-Id`.
    pub id: String,
    /// The protocol version `initialize` negotiated.
    pub protocol_version: String,
    /// Who the client said it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Implementation>,
    /// What the client declared it can do.
    #[serde(default)]
    pub client_capabilities: ClientCapabilities,
    /// The level `logging/setLevel` chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<LoggingLevel>,
    /// The URIs `resources/subscribe`d (sorted).
    #[serde(default)]
    pub subscriptions: Vec<String>,
    /// The client sent `notifications/initialized`.
    #[serde(default)]
    pub client_ready: bool,
    /// The identity of the principal that opened the session (`None`: an open endpoint); a
    /// request from another principal is answered 404 on every replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Whose share of the sessions it counts in (principal, else peer address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// When it was opened, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Keeps 2025-11-25 sessions where every replica of an endpoint finds them.
///
/// A session unused for `idle` ([`HttpConfig::session_idle_timeout`]) is gone: `load` answers
/// `None` for it on every replica. Each method may fail (the backend is unreachable); the
/// endpoint then answers that request with an error instead of guessing.
///
/// [`HttpConfig::session_idle_timeout`]: super::HttpConfig::session_idle_timeout
pub trait SessionStore: std::fmt::Debug + Send + Sync + 'static {
    /// Stores `record` (new, or changed: log level, subscriptions), to expire after `idle`
    /// without use.
    fn save<'a>(&'a self, record: &'a SessionRecord, idle: Duration) -> StoreFuture<'a, ()>;

    /// The session `id` if it exists; counts as a use (its expiry moves `idle` ahead).
    fn load<'a>(&'a self, id: &'a str, idle: Duration) -> StoreFuture<'a, Option<SessionRecord>>;

    /// Deletes the session (`DELETE`); true when it existed.
    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool>;

    /// Hands `answer` (the client's JSON-RPC response to a server-to-client request of
    /// `session`, which no request on this replica waits for) to every replica, so that the
    /// one that sent the request gets it; true when it was sent. The default forwards nothing
    /// (false): the answer must then reach the replica that asked.
    fn forward_answer<'a>(&'a self, session: &'a str, answer: &'a str) -> StoreFuture<'a, bool> {
        let _ = (session, answer);
        Box::pin(std::future::ready(Ok(false)))
    }

    /// The answers [`forward_answer`](Self::forward_answer)ed by any replica, as
    /// `(session, answer)`; `None` (the default) when the store forwards none. Called once per
    /// endpoint, when it starts.
    fn answers(&self) -> Option<tokio::sync::broadcast::Receiver<(String, String)>> {
        None
    }
}

/// Answers forwarded between replicas that a slow receiver may fall behind by: 1024.
pub(crate) const ANSWERS: usize = 1024;

/// What a store has of one stream after an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay {
    /// The store knows no such stream of this session (`Last-Event-ID` gets 400).
    Unknown,
    /// Events after the one asked for were dropped (the bounds): the client lost messages
    /// (`Last-Event-ID` gets 410 Gone).
    Gone,
    /// The next events, oldest first (sequence number and ready SSE frame), and whether the
    /// stream has ended (nothing will follow those).
    Events {
        /// `(seq, frame)` pairs.
        events: Vec<(u64, String)>,
        /// The stream is over.
        finished: bool,
    },
}

/// Keeps the resumable SSE events of 2025-11-25 sessions where every replica finds them, so
/// a `GET` with `Last-Event-ID` on any replica replays a stream another one wrote.
///
/// Streams are named by a number unique within the session (the endpoint picks them at random
/// when a store is set); events by the stream and a sequence number counted from 1. A store
/// is bounded: it drops a session's oldest events first and remembers, per stream, the
/// highest sequence number it dropped, so that a replay asking for them is told
/// [`Replay::Gone`].
pub trait EventStore: std::fmt::Debug + Send + Sync + 'static {
    /// Notes that `stream` of `session` exists (before its first event).
    fn open_stream<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, ()>;

    /// Keeps `frame` (the SSE frame of event `seq` of `stream`).
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        frame: &'a str,
    ) -> StoreFuture<'a, ()>;

    /// Notes that `stream` has ended.
    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, ()>;

    /// The events of `stream` after `seq` (at most a batch; call again for more).
    fn read<'a>(&'a self, session: &'a str, stream: u64, seq: u64) -> StoreFuture<'a, Replay>;

    /// Forgets every event of `session` (it was deleted).
    fn remove<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()>;
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A [`SessionStore`] in this process's memory: shared by the endpoints given the same store
/// (clone it: clones share), lost when the process ends.
///
/// ```
/// use mcp_core::transport::{HttpConfig, MemorySessionStore};
///
/// let sessions = MemorySessionStore::default();
/// let a = HttpConfig::default().session_store(sessions.clone());
/// let b = HttpConfig::default().session_store(sessions);
/// # drop((a, b));
/// ```
#[derive(Debug, Clone)]
pub struct MemorySessionStore {
    sessions: Arc<Mutex<HashMap<String, Kept>>>,
    answers: tokio::sync::broadcast::Sender<(String, String)>,
}

impl Default for MemorySessionStore {
    fn default() -> Self {
        Self {
            sessions: Arc::default(),
            answers: tokio::sync::broadcast::channel(ANSWERS).0,
        }
    }
}

/// A record, when it was last used, and how long it may stay unused.
type Kept = (SessionRecord, Instant, Duration);

impl SessionStore for MemorySessionStore {
    fn save<'a>(&'a self, record: &'a SessionRecord, idle: Duration) -> StoreFuture<'a, ()> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|_, (_, seen, idle)| seen.elapsed() <= *idle);
        sessions.insert(record.id.clone(), (record.clone(), Instant::now(), idle));
        Box::pin(std::future::ready(Ok(())))
    }

    fn load<'a>(&'a self, id: &'a str, idle: Duration) -> StoreFuture<'a, Option<SessionRecord>> {
        let mut sessions = lock(&self.sessions);
        let found = match sessions.get_mut(id) {
            Some((_, seen, kept)) if seen.elapsed() > *kept => {
                sessions.remove(id);
                None
            }
            Some((record, seen, kept)) => {
                *seen = Instant::now();
                *kept = idle;
                Some(record.clone())
            }
            None => None,
        };
        Box::pin(std::future::ready(Ok(found)))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        let existed = lock(&self.sessions).remove(id).is_some();
        Box::pin(std::future::ready(Ok(existed)))
    }

    fn forward_answer<'a>(&'a self, session: &'a str, answer: &'a str) -> StoreFuture<'a, bool> {
        let sent = self
            .answers
            .send((session.to_owned(), answer.to_owned()))
            .is_ok();
        Box::pin(std::future::ready(Ok(sent)))
    }

    fn answers(&self) -> Option<tokio::sync::broadcast::Receiver<(String, String)>> {
        Some(self.answers.subscribe())
    }
}

/// An [`EventStore`] in this process's memory, with the bounds of the endpoint's own store:
/// per session `session_bytes` and 1,024 events, `total_bytes` across sessions, the oldest
/// events first to go. A session's events are forgotten when it is deleted, or after
/// [`ttl`](Self::ttl) (default 30 min, the default `session_idle_timeout`) without a write or
/// a replay. Clones share.
#[derive(Clone)]
pub struct MemoryEventStore {
    session_bytes: usize,
    total_bytes: usize,
    ttl: Duration,
    total: Arc<AtomicUsize>,
    sessions: Arc<Mutex<Held>>,
}

/// The sessions' stores, when each was last used, and when they were last swept.
struct Held {
    stores: HashMap<String, (Arc<events::EventStore>, Instant)>,
    swept: Instant,
}

/// How often a [`MemoryEventStore`] looks for sessions unused past its TTL: every 10 s.
const SWEEP: Duration = Duration::from_secs(10);

impl std::fmt::Debug for MemoryEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryEventStore")
            .field("session_bytes", &self.session_bytes)
            .field("total_bytes", &self.total_bytes)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryEventStore {
    /// The bounds of [`HttpConfig`](super::HttpConfig)'s defaults: 4 MiB per session, 64 MiB
    /// in all.
    fn default() -> Self {
        Self::new(4 * 1024 * 1024, 64 * 1024 * 1024)
    }
}

impl MemoryEventStore {
    /// A store keeping at most `session_bytes` per session and `total_bytes` in all.
    pub fn new(session_bytes: usize, total_bytes: usize) -> Self {
        Self {
            session_bytes,
            total_bytes,
            ttl: Duration::from_secs(30 * 60),
            total: Arc::new(AtomicUsize::new(0)),
            sessions: Arc::new(Mutex::new(Held {
                stores: HashMap::new(),
                swept: Instant::now(),
            })),
        }
    }

    /// How long a session's events are kept without a write or a replay. Default 30 min.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    fn fresh(&self) -> Arc<events::EventStore> {
        Arc::new(events::EventStore::named(
            self.session_bytes,
            self.total_bytes,
            self.total.clone(),
        ))
    }

    /// The store of session `id` (`create`: made when missing), marked as used.
    fn session(&self, id: &str, create: bool) -> Option<Arc<events::EventStore>> {
        let mut held = lock(&self.sessions);
        if held.swept.elapsed() >= SWEEP {
            let ttl = self.ttl;
            held.stores.retain(|_, (_, used)| used.elapsed() <= ttl);
            held.swept = Instant::now();
        }
        if !create && !held.stores.contains_key(id) {
            return None;
        }
        let (store, used) = held
            .stores
            .entry(id.to_owned())
            .or_insert_with(|| (self.fresh(), Instant::now()));
        if used.elapsed() > self.ttl {
            // Expired, not yet swept: its events are gone.
            *store = self.fresh();
        }
        *used = Instant::now();
        Some(store.clone())
    }

    fn writing(&self, id: &str) -> Arc<events::EventStore> {
        // Always `Some` when creating; a detached store otherwise keeps this total.
        self.session(id, true).unwrap_or_else(|| self.fresh())
    }
}

impl EventStore for MemoryEventStore {
    fn open_stream<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, ()> {
        self.writing(session).open_named(stream);
        Box::pin(std::future::ready(Ok(())))
    }

    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        frame: &'a str,
    ) -> StoreFuture<'a, ()> {
        self.writing(session).push_frame(stream, seq, frame);
        Box::pin(std::future::ready(Ok(())))
    }

    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, ()> {
        self.writing(session).finish(stream);
        Box::pin(std::future::ready(Ok(())))
    }

    fn read<'a>(&'a self, session: &'a str, stream: u64, seq: u64) -> StoreFuture<'a, Replay> {
        let replay = match self.session(session, false) {
            None => Replay::Unknown,
            Some(store) => match store.resume(stream, seq) {
                Resume::Unknown => Replay::Unknown,
                Resume::Gone => Replay::Gone,
                Resume::Ready => match store.after_text(stream, seq) {
                    Some((events, finished)) => Replay::Events { events, finished },
                    None => Replay::Gone,
                },
            },
        };
        Box::pin(std::future::ready(Ok(replay)))
    }

    fn remove<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()> {
        lock(&self.sessions).stores.remove(session);
        Box::pin(std::future::ready(Ok(())))
    }
}

/// How long a `Last-Event-ID` naming a stream the shared store does not know yet waits for
/// it: the replica writing it forwards its events asynchronously (1 s, in 50 ms steps).
const UNKNOWN_GRACE: Duration = Duration::from_secs(1);
/// How often a replay from a shared store looks for more events of a stream not yet finished
/// (a store has no change notification): 100 ms.
const POLL: Duration = Duration::from_millis(100);

/// The first read of a replay from a shared store, giving the writing replica
/// [`UNKNOWN_GRACE`] to forward a stream just opened.
pub(crate) async fn first_read(
    store: &dyn EventStore,
    session: &str,
    stream: u64,
    seq: u64,
) -> Result<Replay, McpError> {
    let deadline = Instant::now() + UNKNOWN_GRACE;
    loop {
        let read = store.read(session, stream, seq).await?;
        if read != Replay::Unknown || Instant::now() >= deadline {
            return Ok(read);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A replay of one stream from a shared store.
pub(crate) struct SharedReplay {
    store: Arc<dyn EventStore>,
    session: String,
    stream: u64,
    seq: u64,
}

pub(crate) fn replay(
    store: Arc<dyn EventStore>,
    session: String,
    stream: u64,
    seq: u64,
) -> SharedReplay {
    SharedReplay {
        store,
        session,
        stream,
        seq,
    }
}

impl SharedReplay {
    /// Sends the events after `seq` (starting with `first`, already read) into `out` until the
    /// stream is finished, `timeout` passes, `out` closes, or events were dropped meanwhile.
    pub(crate) async fn run(
        mut self,
        first: Replay,
        out: tokio::sync::mpsc::Sender<axum::body::Bytes>,
        timeout: Duration,
    ) {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut read = first;
        loop {
            let Replay::Events { events, finished } = read else {
                return;
            };
            let empty = events.is_empty();
            for (seq, frame) in events {
                self.seq = seq;
                if out.send(axum::body::Bytes::from(frame)).await.is_err() {
                    return;
                }
            }
            if finished && empty {
                return;
            }
            if empty {
                if tokio::time::Instant::now() + POLL > deadline {
                    return;
                }
                tokio::time::sleep(POLL).await;
            }
            read = match self.store.read(&self.session, self.stream, self.seq).await {
                Ok(read) => read,
                Err(e) => {
                    tracing::warn!(error = %e, "a replay from the shared event store failed");
                    return;
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_memory_event_store_replays_bounds_and_says_gone() {
        let store = MemoryEventStore::new(1000, 10_000);
        store.open_stream("s", 77).await.unwrap();
        for seq in 1..=3 {
            let frame = events::frame(77, seq, "{}");
            store
                .append("s", 77, seq, std::str::from_utf8(&frame).unwrap())
                .await
                .unwrap();
        }
        store.finish("s", 77).await.unwrap();
        let Replay::Events { events, finished } = store.read("s", 77, 1).await.unwrap() else {
            panic!("events");
        };
        assert!(finished);
        assert_eq!(
            events.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(events[0].1, "id: 77-2\ndata: {}\n\n");
        assert_eq!(store.read("s", 78, 0).await.unwrap(), Replay::Unknown);
        assert_eq!(store.read("t", 77, 0).await.unwrap(), Replay::Unknown);
        // Over the session's bytes: the oldest go, and a replay from before them is gone.
        for seq in 4..=40 {
            store.append("s", 77, seq, &"x".repeat(100)).await.unwrap();
        }
        assert_eq!(store.read("s", 77, 1).await.unwrap(), Replay::Gone);
        store.remove("s").await.unwrap();
        assert_eq!(store.read("s", 77, 39).await.unwrap(), Replay::Unknown);
        // Unused past its TTL, a session's events are gone.
        let store = MemoryEventStore::default().ttl(Duration::from_millis(50));
        store.open_stream("s", 5).await.unwrap();
        store
            .append("s", 5, 1, "id: 5-1\ndata: {}\n\n")
            .await
            .unwrap();
        assert!(matches!(
            store.read("s", 5, 0).await.unwrap(),
            Replay::Events { .. }
        ));
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert_eq!(store.read("s", 5, 0).await.unwrap(), Replay::Unknown);
    }

    #[tokio::test]
    async fn the_memory_session_store_expires_and_removes() {
        let store = MemorySessionStore::default();
        let record = SessionRecord {
            id: "abc".into(),
            protocol_version: "2025-11-25".into(),
            client_info: None,
            client_capabilities: ClientCapabilities::default(),
            log_level: Some(LoggingLevel::Error),
            subscriptions: vec!["file:///a".into()],
            client_ready: true,
            owner: None,
            client: None,
            created_at_ms: now_ms(),
        };
        let idle = Duration::from_millis(50);
        store.save(&record, idle).await.unwrap();
        assert_eq!(store.load("abc", idle).await.unwrap(), Some(record.clone()));
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert_eq!(store.load("abc", idle).await.unwrap(), None);
        store.save(&record, idle).await.unwrap();
        assert!(store.remove("abc").await.unwrap());
        assert!(!store.remove("abc").await.unwrap());
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["protocolVersion"], "2025-11-25");
        assert_eq!(json["logLevel"], "error");
    }
}
