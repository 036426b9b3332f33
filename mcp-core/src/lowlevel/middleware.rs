//! Middleware: an ordered chain around every inbound message, `initialize` and notifications
//! included. A middleware can observe a message, refuse it (return an error for that message
//! only), rewrite its params, or answer it itself without calling [`Next::run`].

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::context::CallInfo;
use super::handler::BoxFuture;
use super::params::Params;
use super::session::Session;
use crate::era::Era;
use crate::error::McpError;
use crate::jsonrpc::RequestId;
use crate::lowlevel::dispatch;
use crate::types::Meta;

/// One inbound message as middleware sees it.
pub struct Incoming<S = ()> {
    pub(crate) info: Arc<CallInfo<S>>,
    /// The params the handler will decode; replace them to rewrite the message.
    pub params: Params,
}

impl<S> std::fmt::Debug for Incoming<S> {
    /// The message's id and method; not its params (they may hold secrets).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Incoming")
            .field("id", &self.info.id)
            .field("method", &self.info.method)
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync + 'static> Incoming<S> {
    /// The method.
    pub fn method(&self) -> &str {
        &self.info.method
    }

    /// The request id (`None` for a notification).
    pub fn request_id(&self) -> Option<&RequestId> {
        self.info.id.as_ref()
    }

    /// True for a notification (its outcome is never sent).
    pub fn is_notification(&self) -> bool {
        self.info.id.is_none()
    }

    /// The message's `params._meta` as it arrived.
    pub fn meta(&self) -> Option<&Meta> {
        self.info.meta.as_ref()?.parsed()
    }

    /// The sender's W3C Trace Context from `params._meta` (SEP-414), as
    /// [`RequestContext::trace_context`](super::RequestContext::trace_context) reads it. A
    /// middleware runs inside the message's `tracing` span: it is the place to make this the
    /// span's remote parent (see `examples/otel`).
    pub fn trace_context(&self) -> Option<crate::trace::TraceContext> {
        crate::trace::TraceContext::from_meta(self.info.meta.as_ref()?.parsed()?)
    }

    /// The era of the message.
    pub fn era(&self) -> Era {
        self.info.era
    }

    /// The protocol version of the message.
    pub fn protocol_version(&self) -> &str {
        &self.info.protocol_version
    }

    /// The HTTP request the message arrived in (`None` on stdio and in memory).
    #[cfg(feature = "http")]
    pub fn http(&self) -> Option<&super::HttpRequest> {
        self.info.http.as_deref()
    }

    /// Who sent the message, as the HTTP endpoint's token verifier established it.
    #[cfg(feature = "http")]
    pub fn principal(&self) -> Option<&crate::auth::Principal> {
        self.info.http.as_deref()?.principal()
    }

    /// The session or connection the message came from (`None` for a 2026 message over HTTP,
    /// which belongs to no session; see [`RequestContext::session`](super::RequestContext::session)).
    pub fn session(&self) -> Option<&Session> {
        self.info.session.as_ref()
    }

    /// The lifespan state.
    pub fn state(&self) -> &S {
        self.info.server.state()
    }
}

/// The rest of the chain after the current middleware.
pub struct Next<S = ()> {
    pub(crate) index: usize,
    pub(crate) _state: std::marker::PhantomData<fn() -> S>,
}

impl<S> std::fmt::Debug for Next<S> {
    /// Which middleware runs next (its index in registration order).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("index", &self.index).finish()
    }
}

impl<S: Send + Sync + 'static> Next<S> {
    /// Passes the message on: to the next middleware, or to the engine and the handler table.
    /// The outcome is the result the client will receive (for a 2026 request, already stamped
    /// with `resultType` and the serverInfo `_meta`).
    pub fn run(self, msg: Incoming<S>) -> BoxFuture<Result<Value, McpError>> {
        let chain = msg.info.server.middleware();
        match chain.get(self.index).cloned() {
            Some(mw) => mw.call(
                msg,
                Next {
                    index: self.index + 1,
                    _state: std::marker::PhantomData,
                },
            ),
            None => {
                let info = msg.info.clone();
                Box::pin(async move {
                    let reply = dispatch::innermost(msg).await?;
                    Ok(dispatch::materialize(reply, &info))
                })
            }
        }
    }
}

/// A middleware. Closures `Fn(Incoming<S>, Next<S>) -> impl Future<Output = Result<Value>>`
/// implement it.
///
/// ```
/// use modelctx_core::lowlevel::Server;
///
/// let mut server = Server::new("audited");
/// server.middleware(|msg, next| async move {
///     eprintln!("-> {}", msg.method());
///     next.run(msg).await
/// });
/// ```
pub trait Middleware<S>: Send + Sync + 'static {
    /// Handles one message.
    fn call(&self, msg: Incoming<S>, next: Next<S>) -> BoxFuture<Result<Value, McpError>>;
}

impl<S, F, Fut> Middleware<S> for F
where
    S: Send + Sync + 'static,
    F: Fn(Incoming<S>, Next<S>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, McpError>> + Send + 'static,
{
    fn call(&self, msg: Incoming<S>, next: Next<S>) -> BoxFuture<Result<Value, McpError>> {
        Box::pin(self(msg, next))
    }
}
