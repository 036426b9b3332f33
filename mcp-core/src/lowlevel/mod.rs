//! The low-level server: a raw table from method name to handler, every handler
//! `async (ctx, params) -> result`, nothing derived and nothing validated; and the engine that
//! runs it ([`RunningServer`], the dispatcher every message goes through).
//!
//! ```text
//! bytes -> jsonrpc::decode -> era (2025 session | 2026 _meta) -> middleware -> table
//!       -> params decoded -> handler -> result stamped for the era -> jsonrpc encode -> bytes
//! ```
//!
//! The high-level server is built on this table; everything it does, a hand-written handler
//! can do too.

mod cache;
mod cancel;
mod capabilities;
mod context;
mod detach;
pub(crate) mod dispatch;
mod handler;
mod http_request;
mod into_server;
mod lifespan;
mod middleware;
mod outbound;
mod param_header_table;
mod params;
mod progress;
pub(crate) mod reply;
pub(crate) mod round;
mod running;
mod scopes;
mod server;
mod session;
mod slots;
mod span;
mod stamp;
pub(crate) mod unwind;
mod url_elicitation;

pub use cache::{CacheHint, CacheScope, CACHEABLE_METHODS};
pub(crate) use context::CallInfo;
pub use context::{NotificationContext, RequestContext};
pub(crate) use handler::erase_request;
pub use handler::BoxFuture;
pub use http_request::HttpRequest;
pub use into_server::IntoServer;
pub use middleware::{Incoming, Middleware, Next};
#[cfg(feature = "http")]
pub(crate) use outbound::Opening;
pub(crate) use outbound::{Outbound, Outbox, Sink, Unwritten};
pub use param_header_table::ParamHeaderTable;
pub use params::Params;
#[cfg(feature = "http")]
pub(crate) use params::{peek, Peeked};
pub use progress::{Progress, ProgressValue};
pub use running::RunningServer;
pub(crate) use server::SessionHook;
pub use server::{Server, ServerOptions, RESERVED_INITIALIZE};
pub use session::Session;
