//! [`State`]: the server's shared state as a handler parameter.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::lowlevel::RequestContext;

/// The server's state (from [`McpServer::with_state`](super::McpServer::with_state) or
/// [`with_lifespan`](super::McpServer::with_lifespan)) as a parameter of a `#[tool]`,
/// `#[resource]` or `#[prompt]` function, like axum's `State`: name the state type once, in
/// the parameter, instead of writing `RequestContext<Catalog>` and calling `ctx.state()`.
///
/// It is not an argument: it does not appear in the schema. It derefs to the state; the
/// pattern `State(catalog)` binds the shared `Arc`. A function may take both a `State<S>` and
/// a `RequestContext<S>` (of the same `S`).
///
/// ```
/// use modelctx_core::server::{McpServer, State};
/// use std::sync::Mutex;
///
/// struct Counter { hits: Mutex<u64> }
///
/// /// Counts the calls.
/// #[modelctx::tool]
/// async fn hit(counter: State<Counter>) -> u64 {
///     let mut hits = counter.hits.lock().unwrap();
///     *hits += 1;
///     *hits
/// }
///
/// let server = McpServer::with_state("counter", Counter { hits: Mutex::new(0) }).tool(HitTool);
/// ```
pub struct State<S>(pub Arc<S>);

impl<S: Send + Sync + 'static> State<S> {
    /// The state of the server serving `ctx`.
    pub fn of(ctx: &RequestContext<S>) -> Self {
        Self(ctx.info.server.shared_state().clone())
    }
}

impl<S> Deref for State<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S> Clone for State<S> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<S: fmt::Debug> fmt::Debug for State<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&self.0).finish()
    }
}
