//! The bounded event store of a 2025 session: SSE events keep ids (`<stream>-<seq>`) so a client
//! that lost a stream can reconnect with `GET` + `Last-Event-ID` and get the rest of it.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use axum::body::Bytes;
use tokio::sync::Notify;

/// Milliseconds a client waits before reconnecting (the SSE `retry` field).
pub(crate) const RETRY_MS: u64 = 1000;

struct Stored {
    stream: u64,
    seq: u64,
    data: String,
}

/// Recent events of one session's streams, oldest dropped first.
pub(crate) struct EventStore {
    capacity: usize,
    next_stream: AtomicU64,
    events: Mutex<VecDeque<Stored>>,
    finished: Mutex<HashSet<u64>>,
    changed: Notify,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl EventStore {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            next_stream: AtomicU64::new(1),
            events: Mutex::new(VecDeque::new()),
            finished: Mutex::new(HashSet::new()),
            changed: Notify::new(),
        }
    }

    /// A new stream id (0 is the standalone GET stream).
    pub(crate) fn open_stream(&self) -> u64 {
        self.next_stream.fetch_add(1, Ordering::Relaxed)
    }

    /// Stores `data` as the next event of `stream`; returns its SSE frame.
    pub(crate) fn push(&self, stream: u64, seq: u64, data: String) -> Bytes {
        let frame = frame(stream, seq, &data);
        let mut events = lock(&self.events);
        if events.len() == self.capacity {
            events.pop_front();
        }
        events.push_back(Stored { stream, seq, data });
        drop(events);
        self.changed.notify_waiters();
        frame
    }

    pub(crate) fn finish(&self, stream: u64) {
        let mut finished = lock(&self.finished);
        finished.insert(stream);
        if finished.len() > self.capacity {
            // Forget finished streams whose events have all been dropped.
            let events = lock(&self.events);
            finished.retain(|s| events.iter().any(|e| e.stream == *s));
        }
        drop(finished);
        self.changed.notify_waiters();
    }

    /// True for a stream this store has opened (0 is the standalone stream).
    pub(crate) fn knows(&self, stream: u64) -> bool {
        stream < self.next_stream.load(Ordering::Relaxed)
    }

    /// Events of `stream` after `seq`, and whether the stream has ended.
    fn after(&self, stream: u64, seq: u64) -> (Vec<Bytes>, u64, bool) {
        let events = lock(&self.events);
        let mut last = seq;
        let frames = events
            .iter()
            .filter(|e| e.stream == stream && e.seq > seq)
            .map(|e| {
                last = last.max(e.seq);
                frame(e.stream, e.seq, &e.data)
            })
            .collect();
        // The standalone stream (0) replays what is stored and ends: it is never "finished".
        // A stream whose events were all dropped has nothing more to give either.
        let done = stream == 0
            || lock(&self.finished).contains(&stream)
            || !events.iter().any(|e| e.stream == stream) && seq > 0;
        (frames, last, done)
    }

    /// Replays `stream` after `seq` into `out` until the stream ends (or `out` closes).
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
            let (frames, last, done) = self.after(stream, seq);
            seq = last;
            for frame in frames {
                if out.send(frame).await.is_err() {
                    return;
                }
            }
            if done {
                return;
            }
            if tokio::time::timeout_at(deadline, wait).await.is_err() {
                return;
            }
        }
    }
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
