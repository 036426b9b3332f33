//! [`RunningServer`]: a started server (lifespan entered, capabilities computed, table frozen),
//! which [`dispatch`](super::dispatch) runs every message through.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::dispatch;
use super::Params;
use super::{Middleware, Server};
use crate::error::McpError;
use crate::jsonrpc::Borrowed;
use crate::types::{Implementation, ServerCapabilities};

/// A server that has started: its lifespan state exists and its table is frozen.
///
/// Transports share one `RunningServer` between all their connections; [`stop`](Self::stop)
/// exits the lifespan once.
pub struct RunningServer<S> {
    pub(crate) server: Server<S>,
    middleware: Arc<[Arc<dyn Middleware<S>>]>,
    capabilities: ServerCapabilities,
    state: Arc<S>,
    stopped: AtomicBool,
    /// Cancelled handlers cleaning up in the background (see `detach.rs`), bounded by
    /// `max_in_flight`.
    pub(crate) detached: std::sync::atomic::AtomicUsize,
    /// The members every plain 2026 result ends with (`resultType` and the serverInfo
    /// `_meta`), encoded once at start.
    stamp_tail: String,
    /// The same for each cacheable method (its cache hints too), in `CACHEABLE_METHODS`'
    /// order.
    cacheable_tails: Vec<String>,
    /// The last 2026 envelope read, reused while clients repeat it.
    pub(crate) envelopes: crate::era::EnvelopeCache,
}

impl<S> std::fmt::Debug for RunningServer<S> {
    /// The server's table (see `Server`'s `Debug`) and whether it has stopped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("server", &self.server)
            .field(
                "stopped",
                &self.stopped.load(std::sync::atomic::Ordering::Relaxed),
            )
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync + 'static> RunningServer<S> {
    /// Enters the lifespan and freezes the table.
    pub async fn start(server: Server<S>) -> Result<Arc<Self>, McpError> {
        let state = (server.lifespan.enter)().await?;
        // The stamp `stamp_modern` gives a result that has none of its members, encoded once:
        // the same mechanism, so the written and the edited stamps cannot drift apart.
        let tail = |method: &str| {
            let mut empty = serde_json::Value::Object(Default::default());
            super::stamp::stamp_modern(
                &server,
                method,
                &crate::jsonrpc::RequestId::Number(0),
                &mut empty,
            );
            let object = serde_json::to_string(&empty).unwrap_or_default();
            object
                .get(1..object.len().saturating_sub(1))
                .unwrap_or_default()
                .to_owned()
        };
        // Any method outside `CACHEABLE_METHODS` gets the plain stamp; `ping` is one.
        let stamp_tail = tail("ping");
        let cacheable_tails = crate::era::CACHEABLE_METHODS
            .iter()
            .map(|m| tail(m))
            .collect();
        Ok(Arc::new(Self {
            stamp_tail,
            cacheable_tails,
            envelopes: Default::default(),
            capabilities: server.capabilities(),
            middleware: server.middleware.clone().into(),
            server,
            state,
            stopped: AtomicBool::new(false),
            detached: std::sync::atomic::AtomicUsize::new(0),
        }))
    }

    /// Exits the lifespan (once; later calls do nothing).
    pub async fn stop(&self) {
        if self.stopped.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(exit) = &self.server.lifespan.exit {
            exit(self.state.clone()).await;
        }
    }

    /// The lifespan state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The lifespan state, shared (what [`State`](crate::server::State) holds).
    pub(crate) fn shared_state(&self) -> &Arc<S> {
        &self.state
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.server.info
    }

    /// The advertised capabilities.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.capabilities
    }

    /// The instructions, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.server.instructions.as_deref()
    }

    /// Serves one message without a transport, as a 2026 stateless request is served: decode,
    /// era, middleware, handler, stamping, encode. Returns the response line (`None` for a
    /// notification or a response); notifications the handler sends are dropped. For embedding
    /// and for measuring the engine alone.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use modelctx_core::lowlevel::RunningServer;
    /// use modelctx_core::lowlevel::Server;
    ///
    /// let server = RunningServer::start(Server::new("x")).await.unwrap();
    /// let line = server.handle_message(br#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
    /// assert!(line.unwrap().contains("supportedVersions"));
    /// # });
    /// ```
    pub async fn handle_message(self: &Arc<Self>, bytes: &[u8]) -> Option<String> {
        // What the handler sends on its stream is dropped (nobody reads it), so a handler that
        // reports progress never waits.
        let sink = crate::lowlevel::Sink::discard();
        // A message served alone belongs to no session (as a 2026 request over HTTP).
        let origin = || dispatch::Origin {
            server: self,
            session: None,
            sink: &sink,
            surface_internal: self.server.options.surface_internal_errors,
            http: None,
        };
        match crate::jsonrpc::decode_borrowed(bytes) {
            Ok(Borrowed::Request { id, method, params }) => {
                let params = Params::from_found(params);
                let answer = dispatch::handle_request(origin(), id, method, params).await;
                Some(answer.line)
            }
            Ok(Borrowed::Notification { method, params }) => {
                let params = Params::from_found(params);
                dispatch::handle_notification(origin(), method, params).await;
                None
            }
            Ok(Borrowed::Response { .. }) => None,
            Err(e) if e.notification => None,
            Err(e) => Some(crate::jsonrpc::encode_error(
                e.id.as_ref(),
                &e.error.to_wire(false),
            )),
        }
    }

    /// The members a complete 2026 result of `method` ends with (`resultType`, the cache
    /// hints of a cacheable method, the serverInfo `_meta`), encoded once at start. `None` for
    /// `subscriptions/listen`, whose stamp carries the request's id.
    pub(crate) fn stamp_tail(&self, method: &str) -> Option<&str> {
        if method == "subscriptions/listen" {
            return None;
        }
        let cacheable = crate::era::CACHEABLE_METHODS
            .iter()
            .position(|m| *m == method);
        Some(match cacheable {
            Some(at) => &self.cacheable_tails[at],
            None => &self.stamp_tail,
        })
    }

    pub(crate) fn middleware(&self) -> &Arc<[Arc<dyn Middleware<S>>]> {
        &self.middleware
    }
}
