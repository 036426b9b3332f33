//! Type erasure of handlers: every table entry is `async (ctx, Params) -> Result<Value>`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::context::{NotificationContext, RequestContext};
use super::params::Params;
use super::reply::Reply;
use crate::error::McpError;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

pub(crate) type ErasedRequest<S> =
    Arc<dyn Fn(RequestContext<S>, Params) -> BoxFuture<Result<Reply, McpError>> + Send + Sync>;

pub(crate) type ErasedNotification<S> =
    Arc<dyn Fn(NotificationContext<S>, Params) -> BoxFuture<Result<(), McpError>> + Send + Sync>;

/// Wraps a typed request handler: params are decoded into `P` before it runs (`-32602` on
/// mismatch) and its result is serialized after.
pub(crate) fn erase_request<S, P, R, F, Fut>(handler: F) -> ErasedRequest<S>
where
    S: Send + Sync + 'static,
    P: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(RequestContext<S>, P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, McpError>> + Send + 'static,
{
    Arc::new(move |ctx, params: Params| match params.decode::<P>() {
        Ok(p) => {
            let fut = handler(ctx, p);
            Box::pin(async move {
                let result = fut.await?;
                match serde_json::to_value(result).map_err(McpError::other)? {
                    // `()` and `None` answer `{}`: a JSON-RPC result is an object.
                    Value::Null => Ok(Reply::Value(Value::Object(Default::default()))),
                    value => Ok(Reply::Value(value)),
                }
            })
        }
        Err(e) => Box::pin(std::future::ready(Err(e))),
    })
}

/// Wraps a typed notification handler.
pub(crate) fn erase_notification<S, P, F, Fut>(handler: F) -> ErasedNotification<S>
where
    S: Send + Sync + 'static,
    P: DeserializeOwned + Send + 'static,
    F: Fn(NotificationContext<S>, P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), McpError>> + Send + 'static,
{
    Arc::new(move |ctx, params: Params| match params.decode::<P>() {
        Ok(p) => Box::pin(handler(ctx, p)),
        Err(e) => Box::pin(std::future::ready(Err(e))),
    })
}
