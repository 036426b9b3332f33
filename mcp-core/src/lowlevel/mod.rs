//! The low-level server: a raw table from method name to handler, every handler
//! `async (ctx, params) -> result`, nothing derived and nothing validated.
//!
//! The high-level server is built on this table; everything it does, a hand-written handler
//! can do too.

mod cache;
mod cancel;
mod capabilities;
mod context;
mod handler;
mod http_request;
mod lifespan;
mod middleware;
mod outbound;
mod params;
mod progress;
mod scopes;
mod server;
mod session;
mod slots;

pub use cache::{CacheHint, CacheScope, CACHEABLE_METHODS};
pub(crate) use context::CallInfo;
pub use context::{NotificationContext, RequestContext};
pub(crate) use handler::erase_request;
pub use handler::BoxFuture;
#[cfg(feature = "http")]
pub use http_request::HttpRequest;
#[cfg(not(feature = "http"))]
pub(crate) use http_request::HttpRequest;
pub use middleware::{Incoming, Middleware, Next};
pub(crate) use outbound::{Outbound, Outbox, Sink};
pub use params::Params;
#[cfg(feature = "http")]
pub(crate) use params::{peek, Peeked};
pub use progress::{Progress, ProgressValue};
pub(crate) use server::SessionHook;
pub use server::{ParamHeaders, Server, ServerOptions, RESERVED_INITIALIZE};
pub use session::Session;
