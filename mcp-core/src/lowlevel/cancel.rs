//! Cancellation a handler can see: [`RequestContext::cancelled`] and
//! [`RequestContext::is_cancelled`].

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

use super::RequestContext;

/// The cancellation of one request: fired by the engine when the request's handler is given
/// up (the client cancelled it, its HTTP stream closed, the connection or server ended).
#[derive(Debug, Default)]
pub(crate) struct CancelSignal {
    fired: AtomicBool,
    /// Set once the handler asked to hear about cancellation: it then gets a grace period to
    /// clean up instead of being dropped at once.
    watched: AtomicBool,
    notify: Notify,
}

impl CancelSignal {
    /// Fires the signal (idempotent) and wakes every waiter.
    pub(crate) fn fire(&self) {
        self.fired.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub(crate) fn is_fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    /// True when the handler subscribed ([`RequestContext::cancelled`] or
    /// [`RequestContext::is_cancelled`]).
    pub(crate) fn is_watched(&self) -> bool {
        self.watched.load(Ordering::SeqCst)
    }

    fn watch(&self) {
        self.watched.store(true, Ordering::SeqCst);
    }

    async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Registered before the check, so a fire in between is not missed.
            notified.as_mut().enable();
            if self.is_fired() {
                return;
            }
            notified.await;
        }
    }
}

impl<S: Send + Sync + 'static> RequestContext<S> {
    /// Resolves when this request is cancelled: the client sent `notifications/cancelled`, it
    /// closed the HTTP response stream (2026), the connection or session ended, or the server
    /// shut down (or, over HTTP, the request ran past `HttpConfig::request_timeout`). Never
    /// resolves for a request that runs to its end.
    ///
    /// A handler that asked (this method, or [`is_cancelled`](Self::is_cancelled)) is not
    /// dropped at once when the request is cancelled: it keeps running, so the branch of a
    /// `tokio::select!` that awaits this future can clean up, for at most
    /// [`ServerOptions::shutdown_grace`](super::ServerOptions::shutdown_grace) (10 s by
    /// default), after which it is dropped. Whatever it returns then is discarded: a cancelled
    /// request gets no answer, and notifications it sends after the cancellation (progress,
    /// logs) are dropped. A handler that never asked is dropped at once, at its current
    /// `.await`.
    ///
    /// The future is `'static`: it can be moved into a task the handler spawns.
    ///
    /// ```no_run
    /// # use modelctx_core::lowlevel::RequestContext;
    /// async fn index(ctx: RequestContext) -> String {
    ///     tokio::select! {
    ///         _ = ctx.cancelled() => {
    ///             // remove the half-written index, release locks...
    ///             "cancelled".into()
    ///         }
    ///         _ = tokio::time::sleep(std::time::Duration::from_secs(60)) => "indexed".into(),
    ///     }
    /// }
    /// ```
    pub fn cancelled(&self) -> impl Future<Output = ()> + Send + 'static {
        let info = self.info.clone();
        info.cancel.watch();
        async move { info.cancel.wait().await }
    }

    /// True once this request was cancelled (see [`cancelled`](Self::cancelled), whose grace
    /// rule a handler that calls this also gets).
    pub fn is_cancelled(&self) -> bool {
        self.info.cancel.watch();
        self.info.cancel.is_fired()
    }
}
