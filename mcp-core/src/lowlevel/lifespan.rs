//! The lifespan: state built once when the server starts serving and torn down once when it
//! stops. Handlers read it as [`RequestContext::state`](super::RequestContext::state).

use std::future::Future;
use std::sync::Arc;

use super::handler::BoxFuture;
use crate::error::McpError;

pub(crate) type EnterFn<S> = Arc<dyn Fn() -> BoxFuture<Result<Arc<S>, McpError>> + Send + Sync>;
pub(crate) type ExitFn<S> = Arc<dyn Fn(Arc<S>) -> BoxFuture<()> + Send + Sync>;

/// How a server's state is entered and exited.
pub(crate) struct Lifespan<S> {
    pub(crate) enter: EnterFn<S>,
    pub(crate) exit: Option<ExitFn<S>>,
}

impl<S> Clone for Lifespan<S> {
    fn clone(&self) -> Self {
        Self {
            enter: self.enter.clone(),
            exit: self.exit.clone(),
        }
    }
}

impl<S: Send + Sync + 'static> Lifespan<S> {
    pub(crate) fn new<F, Fut>(enter: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<S, McpError>> + Send + 'static,
    {
        Self {
            enter: Arc::new(move || {
                let fut = enter();
                Box::pin(async move { fut.await.map(Arc::new) })
            }),
            exit: None,
        }
    }

    /// A lifespan whose state already exists: every start shares this one value.
    pub(crate) fn fixed(state: Arc<S>) -> Self {
        Self {
            enter: Arc::new(move || {
                let state = state.clone();
                Box::pin(async move { Ok(state) })
            }),
            exit: None,
        }
    }
}
