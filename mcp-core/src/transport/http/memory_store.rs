//! The in-memory [`SessionStore`] and [`EventStore`]: one process's sessions and events, with
//! the same bounds as the transport's own store (the defaults when no store is configured).

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::events::{self, Resume};
use super::sessions::lock;
use super::store::{EventStore, Replay, SessionRecord, SessionStore, StoreFuture, ANSWERS};

/// A [`SessionStore`] in this process's memory: shared by the endpoints given the same store
/// (clone it: clones share), lost when the process ends.
///
/// ```
/// use modelctx_core::transport::{HttpConfig, MemorySessionStore};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::store::now_ms;
    use crate::types::{ClientCapabilities, LoggingLevel};

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
