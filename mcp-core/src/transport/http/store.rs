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

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::McpError;
use crate::types::{ClientCapabilities, Implementation, LoggingLevel};

/// The future a store method returns (boxed, so the traits stay object-safe).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, McpError>> + Send + 'a>>;

/// What a 2025-11-25 session is, as kept in a [`SessionStore`]: enough for any replica to
/// serve it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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
/// Every replica holding a session reads its record on each request and takes what other
/// replicas changed (log level, subscriptions, readiness) before serving it, and reads it
/// again before writing a change of its own, so changes made one after the other on different
/// replicas all survive, and two made at once to different fields (a log level here, a
/// subscription there) too. What stays: two replicas changing the same field of one session
/// at once (the same level, the same URI), or both writing at the same instant (between one's
/// read and its write): the last writer wins. A change is written before its answer is
/// sent, so a client that waits for each answer before its next change never meets this.
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
