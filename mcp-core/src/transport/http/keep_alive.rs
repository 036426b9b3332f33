//! SSE keep-alive: a comment line (`: keep-alive`) on a stream that has been silent for
//! [`HttpConfig::keep_alive`](super::HttpConfig::keep_alive), so that proxies and load
//! balancers do not cut an idle stream. A comment is no event: it has no id, is not stored for
//! `Last-Event-ID` replay, and clients ignore it.

use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use tokio::time::{Instant, Sleep};

/// The comment frame sent on a silent stream.
pub(crate) const COMMENT: &[u8] = b": keep-alive\n\n";

/// `inner` with a keep-alive comment after every `interval` of silence.
///
/// A busy stream costs one clock read per frame: the timer is not reset on every frame but
/// re-armed, when it fires, for `interval` after the last frame (so it wakes the task at most
/// once per interval).
pub(crate) struct KeepAlive<B> {
    inner: B,
    tick: Option<Tick>,
    done: bool,
}

struct Tick {
    interval: Duration,
    timer: Pin<Box<Sleep>>,
    last: Instant,
}

impl<B> KeepAlive<B> {
    /// `None` sends no comments (the stream passes through).
    pub(crate) fn new(inner: B, interval: Option<Duration>) -> Self {
        let tick = interval.filter(|i| !i.is_zero()).map(|interval| {
            let now = Instant::now();
            Tick {
                interval,
                timer: Box::pin(tokio::time::sleep_until(now + interval)),
                last: now,
            }
        });
        Self {
            inner,
            tick,
            done: false,
        }
    }
}

impl<B> futures_core::Stream for KeepAlive<B>
where
    B: futures_core::Stream<Item = Result<Bytes, std::io::Error>> + Unpin,
{
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(None) => {
                this.done = true;
                this.tick = None;
                return Poll::Ready(None);
            }
            Poll::Ready(Some(frame)) => {
                if let Some(tick) = this.tick.as_mut() {
                    tick.last = Instant::now();
                }
                return Poll::Ready(Some(frame));
            }
            Poll::Pending => {}
        }
        let Some(tick) = this.tick.as_mut() else {
            return Poll::Pending;
        };
        loop {
            if tick.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let due = tick.last + tick.interval;
            let now = Instant::now();
            if due > now {
                // Frames went out since the timer was armed: wait for silence again.
                tick.timer.as_mut().reset(due);
                continue;
            }
            tick.last = now;
            tick.timer.as_mut().reset(now + tick.interval);
            return Poll::Ready(Some(Ok(Bytes::from_static(COMMENT))));
        }
    }
}
