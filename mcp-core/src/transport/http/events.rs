//! The bounded event store of a 2025 session: SSE events keep ids (`<stream>-<seq>`) so a client
//! that lost a stream can reconnect with `GET` + `Last-Event-ID` and get the rest of it.
//!
//! Bounded in bytes, per session ([`HttpConfig::event_store_session_bytes`]) and across every
//! session of the endpoint ([`HttpConfig::event_store_total_bytes`]), and in count
//! ([`MAX_EVENTS`]); the oldest events of the session go first. Each event is kept as its ready
//! SSE frame (`Bytes`, shared with the live stream), so a replay copies nothing. A replay that
//! asks for events already dropped is told so ([`Resume::Gone`]) instead of getting silence.
//!
//! [`HttpConfig::event_store_session_bytes`]: super::HttpConfig::event_store_session_bytes
//! [`HttpConfig::event_store_total_bytes`]: super::HttpConfig::event_store_total_bytes

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use tokio::sync::Notify;

/// Milliseconds a client waits before reconnecting (the SSE `retry` field).
pub(crate) const RETRY_MS: u64 = 1000;

/// Events kept per session, whatever their size (the byte bounds usually bind first).
pub(crate) const MAX_EVENTS: usize = 1024;

/// Streams per session whose fate (finished, what was dropped) is remembered; older ones are
/// forgotten, and a `Last-Event-ID` naming one is answered as gone.
const MAX_STREAMS: usize = 1024;

/// Frames handed to a replay per look at the store.
const REPLAY_BATCH: usize = 16;

struct Stored {
    stream: u64,
    seq: u64,
    frame: Bytes,
}

#[derive(Default)]
struct StreamInfo {
    /// The highest sequence number dropped from this stream (0: none).
    dropped_through: u64,
    finished: bool,
}

#[derive(Default)]
struct Inner {
    events: VecDeque<Stored>,
    bytes: usize,
    streams: BTreeMap<u64, StreamInfo>,
}

/// What a `Last-Event-ID` can get.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resume {
    /// The rest of the stream can be replayed.
    Ready,
    /// A stream this session never opened.
    Unknown,
    /// Events after the one named were dropped (the bounds): the client lost messages.
    Gone,
}

/// What a session's store forwards to the shared [`EventStore`](super::store::EventStore) of
/// the endpoint, in order, so other replicas can replay its streams.
enum MirrorOp {
    Open(u64),
    Append(u64, u64, Bytes),
    Finish(u64),
}

impl MirrorOp {
    fn stream(&self) -> u64 {
        match self {
            Self::Open(s) | Self::Append(s, ..) | Self::Finish(s) => *s,
        }
    }

    /// Bytes of event it holds.
    fn size(&self) -> usize {
        match self {
            Self::Append(_, _, frame) => frame.len(),
            _ => 0,
        }
    }
}

/// Writes one session may have queued for the shared event store (a slow or unreachable
/// one) before further writes are dropped: 1,024 (and at most the session's event bytes).
pub(crate) const MIRROR_QUEUE: usize = 1024;

/// The writes of one session on their way to the shared store.
struct Mirror {
    queue: tokio::sync::mpsc::Sender<MirrorOp>,
    state: Arc<Mutex<MirrorState>>,
}

/// What the queue to the shared store holds, and which streams lost a write to it.
#[derive(Default)]
struct MirrorState {
    /// Writes queued so far.
    sent: u64,
    /// Bytes of events queued, not yet written.
    bytes: usize,
    /// Streams that lost a write: nothing more of them is queued, so the shared store holds
    /// a gapless start of each.
    lossy: HashSet<u64>,
    /// Lossy streams to finish in the shared store once the writes queued before the loss
    /// (the count of `sent` then) are done: a replay elsewhere ends after what was written
    /// instead of passing over the gap.
    to_finish: Vec<(u64, u64)>,
    /// The queue is full (warned about once until a write is queued again).
    full: bool,
    /// Times the queue filled up.
    overflows: u64,
}

/// Recent events of one session's streams, oldest dropped first.
pub(crate) struct EventStore {
    /// Streams are named at random (unique across replicas) and each write is forwarded to
    /// the shared store; `None`: streams are counted from 1 and live here only.
    mirror: Option<Mirror>,
    /// Streams are named by the caller (random, unique across replicas): one not seen here is
    /// unknown rather than forgotten.
    named: bool,
    session_bytes: usize,
    total_bytes: usize,
    /// Bytes held by every store of the endpoint.
    total: Arc<AtomicUsize>,
    next_stream: AtomicU64,
    inner: Mutex<Inner>,
    changed: Notify,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl EventStore {
    /// A store holding at most `session_bytes`, and nothing that would take `total` (shared by
    /// every store of the endpoint) past `total_bytes`.
    pub(crate) fn new(session_bytes: usize, total_bytes: usize, total: Arc<AtomicUsize>) -> Self {
        let mut inner = Inner::default();
        inner.streams.insert(0, StreamInfo::default());
        Self {
            mirror: None,
            named: false,
            session_bytes,
            total_bytes,
            total,
            next_stream: AtomicU64::new(1),
            inner: Mutex::new(inner),
            changed: Notify::new(),
        }
    }

    /// Like [`new`](Self::new), but streams get random names and every write is also sent,
    /// in order, to `shared` under `session` (the standalone stream `0` excepted).
    ///
    /// The writes wait in a queue of at most [`MIRROR_QUEUE`] writes and `session_bytes` of
    /// events. When the shared store falls that far behind, a write that does not fit is
    /// dropped (with one warning each time the queue fills up) and its stream is lossy: no
    /// more of it is written, and once what was queued before is written the stream is
    /// finished there, so a `Last-Event-ID` replay on another replica gets the stream's start
    /// and ends rather than skip the lost events. A write the shared store fails makes its
    /// stream lossy the same way (see `write_mirror`).
    pub(crate) fn mirrored(
        session_bytes: usize,
        total_bytes: usize,
        total: Arc<AtomicUsize>,
        shared: Arc<dyn super::store::EventStore>,
        session: String,
    ) -> Self {
        let (queue, rx) = tokio::sync::mpsc::channel(MIRROR_QUEUE);
        let state = Arc::new(Mutex::new(MirrorState::default()));
        tokio::spawn(write_mirror(shared, session, rx, state.clone()));
        let mut store = Self::new(session_bytes, total_bytes, total);
        store.mirror = Some(Mirror { queue, state });
        store.named = true;
        store
    }

    /// A store whose streams are all named by the caller ([`open_named`](Self::open_named)).
    pub(crate) fn named(session_bytes: usize, total_bytes: usize, total: Arc<AtomicUsize>) -> Self {
        let mut store = Self::new(session_bytes, total_bytes, total);
        store.named = true;
        store
    }

    /// Queues `op` for the shared store, unless its stream is lossy or the queue is full (the
    /// stream then becomes lossy).
    fn forward(&self, op: MirrorOp) {
        let Some(mirror) = &self.mirror else {
            return;
        };
        let (stream, size) = (op.stream(), op.size());
        let finish = matches!(op, MirrorOp::Finish(_));
        let mut state = lock(&mirror.state);
        if state.lossy.contains(&stream) {
            if finish {
                // Its finish is already due; nothing more of it will come.
                state.lossy.remove(&stream);
            }
            return;
        }
        let room = state.bytes == 0 || state.bytes + size <= self.session_bytes;
        let queued = if room {
            mirror.queue.try_send(op)
        } else {
            Err(tokio::sync::mpsc::error::TrySendError::Full(op))
        };
        match queued {
            Ok(()) => {
                state.sent += 1;
                state.bytes += size;
                state.full = false;
            }
            Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => {
                if !state.full {
                    state.full = true;
                    state.overflows += 1;
                    tracing::warn!(
                        queued = MIRROR_QUEUE,
                        "the shared event store is not keeping up: SSE events are dropped from \
                         its queue, and the streams that lost one end early when resumed on \
                         another replica"
                    );
                }
                if !finish {
                    state.lossy.insert(stream);
                }
                let sent = state.sent;
                state.to_finish.push((stream, sent));
            }
            Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    /// A new stream id (0 is the standalone GET stream).
    pub(crate) fn open_stream(&self) -> u64 {
        let stream = if self.named {
            random_stream()
        } else {
            self.next_stream.fetch_add(1, Ordering::Relaxed)
        };
        self.open_named(stream);
        self.forward(MirrorOp::Open(stream));
        stream
    }

    /// Opens the stream `stream` (named by the caller).
    pub(crate) fn open_named(&self, stream: u64) {
        if !self.named {
            self.next_stream.fetch_max(stream + 1, Ordering::Relaxed);
        }
        let mut inner = lock(&self.inner);
        inner.streams.insert(stream, StreamInfo::default());
        while inner.streams.len() > MAX_STREAMS {
            // Forget the oldest stream other than the standalone one (its events go with it).
            let Some(oldest) = inner.streams.keys().copied().find(|s| *s != 0) else {
                break;
            };
            inner.streams.remove(&oldest);
            let before = inner.bytes;
            inner.events.retain(|e| e.stream != oldest);
            let kept: usize = inner.events.iter().map(|e| e.frame.len()).sum();
            inner.bytes = kept;
            self.total.fetch_sub(before - kept, Ordering::Relaxed);
        }
    }

    /// Stores `data` as the event `seq` of `stream`; returns its SSE frame (the same bytes).
    pub(crate) fn push(&self, stream: u64, seq: u64, data: &str) -> Bytes {
        let frame = frame(stream, seq, data);
        if stream != 0 {
            self.forward(MirrorOp::Append(stream, seq, frame.clone()));
        }
        self.keep(stream, seq, frame.clone());
        frame
    }

    /// Stores a ready SSE frame as the event `seq` of `stream`.
    pub(crate) fn push_frame(&self, stream: u64, seq: u64, frame: &str) {
        self.keep(stream, seq, Bytes::from(frame.to_owned()));
    }

    fn keep(&self, stream: u64, seq: u64, frame: Bytes) {
        let size = frame.len();
        let mut inner = lock(&self.inner);
        // Make room: the session's oldest events go first.
        while !inner.events.is_empty()
            && (inner.events.len() >= MAX_EVENTS
                || inner.bytes + size > self.session_bytes
                || self.total.load(Ordering::Relaxed) + size > self.total_bytes)
        {
            if let Some(old) = inner.events.pop_front() {
                inner.bytes -= old.frame.len();
                self.total.fetch_sub(old.frame.len(), Ordering::Relaxed);
                if let Some(info) = inner.streams.get_mut(&old.stream) {
                    info.dropped_through = info.dropped_through.max(old.seq);
                }
            }
        }
        let fits = size <= self.session_bytes
            && self.total.load(Ordering::Relaxed) + size <= self.total_bytes;
        if fits {
            inner.bytes += size;
            self.total.fetch_add(size, Ordering::Relaxed);
            inner.events.push_back(Stored { stream, seq, frame });
        } else if let Some(info) = inner.streams.get_mut(&stream) {
            // Sent live, never kept: a replay past it must say it is gone.
            info.dropped_through = info.dropped_through.max(seq);
        }
        drop(inner);
        self.changed.notify_waiters();
    }

    pub(crate) fn finish(&self, stream: u64) {
        self.forward(MirrorOp::Finish(stream));
        if let Some(info) = lock(&self.inner).streams.get_mut(&stream) {
            info.finished = true;
        }
        self.changed.notify_waiters();
    }

    /// Whether the events of `stream` after `seq` can be replayed.
    pub(crate) fn resume(&self, stream: u64, seq: u64) -> Resume {
        let inner = lock(&self.inner);
        let unknown = if self.named {
            !inner.streams.contains_key(&stream)
        } else {
            stream >= self.next_stream.load(Ordering::Relaxed)
        };
        if unknown {
            return Resume::Unknown;
        }
        match inner.streams.get(&stream) {
            Some(info) if info.dropped_through <= seq => Resume::Ready,
            // Dropped events, or a stream forgotten altogether.
            _ => Resume::Gone,
        }
    }

    /// Up to [`REPLAY_BATCH`] events of `stream` after `seq` (shared frames, not copies), and
    /// whether the stream has ended; `None` when events after `seq` were dropped meanwhile.
    fn after(&self, stream: u64, seq: u64) -> Option<(Vec<(u64, Bytes)>, bool)> {
        let inner = lock(&self.inner);
        let info = inner.streams.get(&stream)?;
        if info.dropped_through > seq {
            return None;
        }
        let frames: Vec<_> = inner
            .events
            .iter()
            .filter(|e| e.stream == stream && e.seq > seq)
            .take(REPLAY_BATCH)
            .map(|e| (e.seq, e.frame.clone()))
            .collect();
        // The standalone stream (0) replays what is stored and ends: it is never "finished".
        let done = frames.len() < REPLAY_BATCH && (stream == 0 || info.finished);
        Some((frames, done))
    }

    /// [`after`](Self::after) as text (for [`MemoryEventStore`](super::memory_store::MemoryEventStore)).
    pub(crate) fn after_text(&self, stream: u64, seq: u64) -> Option<(Vec<(u64, String)>, bool)> {
        let (frames, done) = self.after(stream, seq)?;
        let frames = frames
            .into_iter()
            .map(|(n, f)| (n, String::from_utf8_lossy(&f).into_owned()))
            .collect();
        Some((frames, done))
    }

    /// Replays `stream` after `seq` into `out` until the stream ends (or `out` closes, or
    /// events the client has not seen are dropped: the stream then ends, and the next
    /// `Last-Event-ID` is told they are gone).
    pub(crate) async fn replay(
        &self,
        stream: u64,
        mut seq: u64,
        out: tokio::sync::mpsc::Sender<Bytes>,
        timeout: std::time::Duration,
    ) {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let wait = self.changed.notified();
            let Some((frames, done)) = self.after(stream, seq) else {
                return;
            };
            let more = !frames.is_empty() && !done;
            for (n, frame) in frames {
                seq = n;
                if out.send(frame).await.is_err() {
                    return;
                }
            }
            if done {
                return;
            }
            if more {
                continue;
            }
            if tokio::time::timeout_at(deadline, wait).await.is_err() {
                return;
            }
        }
    }
}

/// Tries to finish `stream` in the shared store: the first try and up to [`FINISH_RETRIES`]
/// more, 100 ms apart.
async fn finish_shared(shared: &dyn super::store::EventStore, session: &str, stream: u64) {
    let mut left = FINISH_RETRIES;
    loop {
        match shared.finish(session, stream).await {
            Ok(()) => return,
            Err(e) if left == 0 => {
                tracing::warn!(error = %e, "a stream could not be ended in the shared event store");
                return;
            }
            Err(_) => left -= 1,
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Times a failed finish of a stream in the shared store is tried again: 2.
const FINISH_RETRIES: u32 = 2;

/// Writes the queued ops of `session` to `shared`, in order, and finishes each lossy stream
/// there once what was queued before its loss is written.
///
/// A stream one of whose writes fails is lossy from then on, as if its write had not fit
/// in the queue: what of it is still queued is not written, nothing more of it is queued,
/// and it is finished there at once, so a replay on another replica ends where the gap
/// would start.
async fn write_mirror(
    shared: Arc<dyn super::store::EventStore>,
    session: String,
    mut rx: tokio::sync::mpsc::Receiver<MirrorOp>,
    state: Arc<Mutex<MirrorState>>,
) {
    let mut done: u64 = 0;
    // Streams whose write failed, with the count of writes queued then: their ops among
    // those are skipped (none of theirs is queued after).
    let mut failed: HashMap<u64, u64> = HashMap::new();
    while let Some(op) = rx.recv().await {
        let (size, stream) = (op.size(), op.stream());
        let skipped = failed.contains_key(&stream);
        if skipped {
            if matches!(op, MirrorOp::Finish(_)) {
                // Its local finish was queued before the loss: the stream will not send
                // more, so it need not stay marked.
                lock(&state).lossy.remove(&stream);
            }
        } else {
            let written = match op {
                MirrorOp::Open(stream) => shared.open_stream(&session, stream).await,
                MirrorOp::Append(stream, seq, frame) => {
                    let text = String::from_utf8_lossy(&frame);
                    shared.append(&session, stream, seq, &text).await
                }
                MirrorOp::Finish(stream) => {
                    finish_shared(shared.as_ref(), &session, stream).await;
                    Ok(())
                }
            };
            if let Err(e) = written {
                tracing::warn!(
                    error = %e,
                    "an SSE event could not be written to the shared event store: its stream \
                     is written no further there, and ends early when resumed on another replica"
                );
                let queued = {
                    let mut state = lock(&state);
                    // Still running here (its local finish not yet seen, nor already due):
                    // nothing more of it is queued.
                    let finished = state.to_finish.iter().any(|(s, _)| *s == stream);
                    if !finished {
                        state.lossy.insert(stream);
                    }
                    state.sent
                };
                failed.insert(stream, queued);
                finish_shared(shared.as_ref(), &session, stream).await;
            }
        }
        done += 1;
        failed.retain(|_, queued| *queued > done);
        let due: Vec<u64> = {
            let mut state = lock(&state);
            state.bytes -= size;
            let (due, later) = state
                .to_finish
                .drain(..)
                .partition(|(_, after)| *after <= done);
            state.to_finish = later;
            due.into_iter().map(|(stream, _)| stream).collect()
        };
        for stream in due {
            finish_shared(shared.as_ref(), &session, stream).await;
        }
    }
}

impl Drop for EventStore {
    fn drop(&mut self) {
        let held = lock(&self.inner).bytes;
        self.total.fetch_sub(held, Ordering::Relaxed);
    }
}

/// A random stream name in `1..2^53` (exact in every JSON number and Lua script).
fn random_stream() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: the clock's nanoseconds still differ between replicas.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(1);
        bytes[..4].copy_from_slice(&nanos.to_le_bytes());
    }
    (u64::from_le_bytes(bytes) & ((1 << 53) - 1)).max(1)
}

/// `id: s-n` + `data: ...`.
pub(crate) fn frame(stream: u64, seq: u64, data: &str) -> Bytes {
    Bytes::from(format!("id: {stream}-{seq}\ndata: {data}\n\n"))
}

/// The priming event that starts a resumable stream: an id, the retry interval, empty data.
pub(crate) fn priming(stream: u64) -> Bytes {
    Bytes::from(format!("id: {stream}-0\nretry: {RETRY_MS}\ndata: \n\n"))
}

/// `s-n` -> `(s, n)`.
pub(crate) fn parse_id(id: &str) -> Option<(u64, u64)> {
    let (s, n) = id.trim().split_once('-')?;
    Some((s.parse().ok()?, n.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::Semaphore;

    #[test]
    fn bytes_are_bounded_per_session_and_in_total_and_drops_are_reported() {
        let total = Arc::new(AtomicUsize::new(0));
        let a = EventStore::new(1000, 1500, total.clone());
        let b = EventStore::new(1000, 1500, total.clone());
        let s = a.open_stream();
        for seq in 1..=20 {
            a.push(s, seq, &"x".repeat(100));
        }
        assert!(lock(&a.inner).bytes <= 1000);
        assert_eq!(a.resume(s, 0), Resume::Gone);
        assert_eq!(a.resume(s, 19), Resume::Ready);
        assert_eq!(a.resume(s + 1, 0), Resume::Unknown);
        let t = b.open_stream();
        for seq in 1..=20 {
            b.push(t, seq, &"y".repeat(100));
        }
        assert!(total.load(Ordering::Relaxed) <= 1500);
        // Too big to keep at all: sent, remembered as dropped.
        b.push(t, 21, &"z".repeat(2000));
        assert_eq!(b.resume(t, 20), Resume::Gone);
        drop(a);
        drop(b);
        assert_eq!(total.load(Ordering::Relaxed), 0);
    }

    /// A fake shared store: writes nothing until `open` has permits (open at once unless
    /// [`stalled`](Self::stalled)), fails the writes named in `fail` (as many times as
    /// listed), and records every write that succeeds, in order.
    #[derive(Debug)]
    struct Fake {
        open: Semaphore,
        fail: Mutex<Vec<String>>,
        writes: Mutex<Vec<String>>,
    }

    impl Fake {
        fn stalled() -> Self {
            Self {
                open: Semaphore::new(0),
                fail: Mutex::default(),
                writes: Mutex::default(),
            }
        }

        fn refusing(writes: &[String]) -> Self {
            Self {
                open: Semaphore::new(Semaphore::MAX_PERMITS),
                fail: Mutex::new(writes.to_vec()),
                writes: Mutex::default(),
            }
        }

        fn write(&self, what: String) -> super::super::store::StoreFuture<'_, ()> {
            Box::pin(async move {
                let _ = self.open.acquire().await;
                let mut fail = lock(&self.fail);
                if let Some(at) = fail.iter().position(|w| *w == what) {
                    fail.remove(at);
                    return Err(crate::error::McpError::internal(format!("{what} failed")));
                }
                lock(&self.writes).push(what);
                Ok(())
            })
        }

        /// The writes once `last` is among them (5 s at most), and 100 ms more (so a write
        /// that should not come would be seen).
        async fn writes_through(&self, last: &str) -> Vec<String> {
            for _ in 0..500 {
                if lock(&self.writes).iter().any(|w| w == last) {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            lock(&self.writes).clone()
        }
    }

    impl super::super::store::EventStore for Fake {
        fn open_stream<'a>(
            &'a self,
            _: &'a str,
            stream: u64,
        ) -> super::super::store::StoreFuture<'a, ()> {
            self.write(format!("open {stream}"))
        }
        fn append<'a>(
            &'a self,
            _: &'a str,
            stream: u64,
            seq: u64,
            _: &'a str,
        ) -> super::super::store::StoreFuture<'a, ()> {
            self.write(format!("append {stream} {seq}"))
        }
        fn finish<'a>(
            &'a self,
            _: &'a str,
            stream: u64,
        ) -> super::super::store::StoreFuture<'a, ()> {
            self.write(format!("finish {stream}"))
        }
        fn read<'a>(
            &'a self,
            _: &'a str,
            _: u64,
            _: u64,
        ) -> super::super::store::StoreFuture<'a, super::super::store::Replay> {
            Box::pin(std::future::ready(Ok(super::super::store::Replay::Unknown)))
        }
        fn remove<'a>(&'a self, _: &'a str) -> super::super::store::StoreFuture<'a, ()> {
            Box::pin(std::future::ready(Ok(())))
        }
    }

    fn overflows(store: &EventStore) -> u64 {
        store
            .mirror
            .as_ref()
            .map_or(0, |m| lock(&m.state).overflows)
    }

    #[tokio::test]
    async fn a_stalled_shared_store_gets_a_bounded_queue_and_lossy_streams_end_early() {
        let shared = Arc::new(Fake::stalled());
        let total = Arc::new(AtomicUsize::new(0));
        let store = EventStore::mirrored(1 << 30, 1 << 30, total, shared.clone(), "s".into());
        let s = store.open_stream();
        for seq in 1..=3000 {
            store.push(s, seq, "{}");
        }
        store.finish(s);
        // Bounded: the writes past the queue were dropped, with one warning.
        {
            let Some(mirror) = &store.mirror else {
                panic!("mirrored");
            };
            let state = lock(&mirror.state);
            assert!(
                state.sent <= MIRROR_QUEUE as u64 + 1,
                "{} queued",
                state.sent
            );
            assert!(state.lossy.is_empty(), "its local finish came");
        }
        assert_eq!(overflows(&store), 1);
        // This replica's copy keeps its own bounds (its latest events), whatever the queue.
        assert_eq!(store.resume(s, 2990), Resume::Ready);

        shared.open.add_permits(Semaphore::MAX_PERMITS);
        let writes = shared.writes_through(&format!("finish {s}")).await;
        // The shared store got a gapless start of the stream, then its end, nothing after.
        assert_eq!(writes[0], format!("open {s}"));
        let appended = writes.len() - 2;
        assert!((1000..3000).contains(&appended), "{appended} appended");
        for (i, write) in writes[1..=appended].iter().enumerate() {
            assert_eq!(*write, format!("append {s} {}", i + 1));
        }
        assert_eq!(writes.last(), Some(&format!("finish {s}")));

        // With the queue drained, a new stream is written whole; no new warning.
        let t = store.open_stream();
        for seq in 1..=5 {
            store.push(t, seq, "{}");
        }
        store.finish(t);
        let writes = shared.writes_through(&format!("finish {t}")).await;
        let tail: Vec<String> = writes[appended + 2..].to_vec();
        let mut want = vec![format!("open {t}")];
        want.extend((1..=5).map(|n| format!("append {t} {n}")));
        want.push(format!("finish {t}"));
        assert_eq!(tail, want);
        assert_eq!(overflows(&store), 1);
    }

    #[tokio::test]
    async fn a_failed_write_to_the_shared_store_ends_the_stream_there_instead_of_a_gap() {
        let total = Arc::new(AtomicUsize::new(0));
        let mirrored = |shared: &Arc<Fake>| {
            EventStore::mirrored(1 << 20, 1 << 20, total.clone(), shared.clone(), "s".into())
        };

        // Everything queued before the writer runs: the failed append's successors and the
        // stream's own finish are already queued; none of them is written after the gap.
        let s = 11;
        let shared = Arc::new(Fake::refusing(&[format!("append {s} 2")]));
        let store = mirrored(&shared);
        store.open_named(s);
        store.forward(MirrorOp::Open(s));
        for seq in 1..=5 {
            store.push(s, seq, "{}");
        }
        store.finish(s);
        let writes = shared.writes_through(&format!("finish {s}")).await;
        assert_eq!(
            writes,
            vec![
                format!("open {s}"),
                format!("append {s} 1"),
                format!("finish {s}")
            ]
        );

        // The loss seen before the rest is sent: nothing more of the stream is queued, its
        // finish is written even when the first try fails, and a later stream is written
        // whole.
        let t = 12;
        let shared = Arc::new(Fake::refusing(&[
            format!("append {t} 2"),
            format!("finish {t}"),
        ]));
        let store = mirrored(&shared);
        store.open_named(t);
        store.forward(MirrorOp::Open(t));
        store.push(t, 1, "{}");
        store.push(t, 2, "{}");
        let writes = shared.writes_through(&format!("finish {t}")).await;
        assert_eq!(
            writes,
            vec![
                format!("open {t}"),
                format!("append {t} 1"),
                format!("finish {t}")
            ]
        );
        for seq in 3..=4 {
            store.push(t, seq, "{}");
        }
        store.finish(t);
        let u = 13;
        store.open_named(u);
        store.forward(MirrorOp::Open(u));
        store.push(u, 1, "{}");
        store.finish(u);
        let writes = shared.writes_through(&format!("finish {u}")).await;
        assert_eq!(
            writes[3..].to_vec(),
            vec![
                format!("open {u}"),
                format!("append {u} 1"),
                format!("finish {u}")
            ]
        );
        if let Some(mirror) = &store.mirror {
            assert!(lock(&mirror.state).lossy.is_empty(), "no stream left lossy");
        }
    }

    #[tokio::test]
    async fn the_queue_to_the_shared_store_is_bounded_in_bytes_too() {
        let shared = Arc::new(Fake::stalled());
        let total = Arc::new(AtomicUsize::new(0));
        let store = EventStore::mirrored(1000, 1 << 30, total, shared.clone(), "s".into());
        let s = store.open_stream();
        for seq in 1..=50 {
            store.push(s, seq, &"x".repeat(100));
        }
        if let Some(mirror) = &store.mirror {
            assert!(lock(&mirror.state).bytes <= 1000);
        }
        shared.open.add_permits(Semaphore::MAX_PERMITS);
        // Not finished here: the mirror ends the lossy stream itself.
        let writes = shared.writes_through(&format!("finish {s}")).await;
        let appended = writes.len() - 2;
        assert!((1..50).contains(&appended), "{appended} appended");
        assert_eq!(writes.last(), Some(&format!("finish {s}")));
    }
}
