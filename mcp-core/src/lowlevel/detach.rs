//! A handler's future that is given up (its request cancelled) while it watches for
//! cancellation is not dropped at once: it goes on, detached, for a grace period to clean up.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use super::session::WorkGuard;
use super::unwind::CatchUnwind;
use crate::lowlevel::CallInfo;

/// Runs a request's handler chain. Dropped before it finished (the request was cancelled), it
/// fires the request's cancellation signal; when the handler watches it (`ctx.cancelled()`,
/// `ctx.is_cancelled()`), the handler goes on in a task of its own for at most `grace` and its
/// answer is discarded; otherwise it is dropped at once.
pub(crate) struct Detach<T: Send + 'static, S: Send + Sync + 'static> {
    inner: Option<CatchUnwind<T>>,
    info: Arc<CallInfo<S>>,
    grace: Duration,
    /// Counts the handler as its session's work until it ends (or its cleanup does).
    work: Option<WorkGuard>,
}

impl<T: Send + 'static, S: Send + Sync + 'static> Detach<T, S> {
    pub(crate) fn new(inner: CatchUnwind<T>, info: Arc<CallInfo<S>>, grace: Duration) -> Self {
        Self {
            inner: Some(inner),
            work: info.session.as_ref().map(|s| s.work_started()),
            info,
            grace,
        }
    }
}

impl<T: Send + 'static, S: Send + Sync + 'static> Future for Detach<T, S> {
    type Output = Result<T, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Pending;
        };
        let poll = Pin::new(inner).poll(cx);
        if poll.is_ready() {
            self.inner = None;
            self.work = None;
        }
        poll
    }
}

impl<T: Send + 'static, S: Send + Sync + 'static> Drop for Detach<T, S> {
    fn drop(&mut self) {
        let Some(handler) = self.inner.take() else {
            return;
        };
        self.info.cancel.fire();
        if !self.info.cancel.is_watched() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // At most `max_in_flight` handlers clean up in the background per server: a client
        // that sends and cancels in a loop cannot pile them up (beyond, they are dropped at once).
        let server = self.info.server.clone();
        let limit = server.server.options.max_in_flight.max(1);
        if server.detached.fetch_add(1, Ordering::AcqRel) >= limit {
            server.detached.fetch_sub(1, Ordering::AcqRel);
            tracing::debug!("too many cancelled handlers cleaning up; this one is dropped at once");
            return;
        }
        let grace = self.grace;
        // The session's close hooks wait for this cleanup.
        let work = self.work.take();
        runtime.spawn(async move {
            let _count = Detached(server);
            let _work = work;
            if tokio::time::timeout(grace, handler).await.is_err() {
                tracing::debug!(
                    grace_ms = grace.as_millis() as u64,
                    "a cancelled handler did not finish within the grace period; dropped"
                );
            }
        });
    }
}

/// Counts one handler cleaning up in the background until it ends.
struct Detached<S>(Arc<crate::lowlevel::RunningServer<S>>);

impl<S> Drop for Detached<S> {
    fn drop(&mut self) {
        self.0.detached.fetch_sub(1, Ordering::AcqRel);
    }
}
