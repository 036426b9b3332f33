//! Transports: bytes in, bytes out; nothing else.

#[cfg(feature = "client")]
mod child;
pub(crate) mod connection;
#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(all(feature = "http", feature = "client"))]
mod http_client;
mod line_writer;
mod memory;
mod stdio;
mod wire;

/// The axum version the HTTP transport is built on, for mounting [`McpHttp::axum_router`].
#[cfg(feature = "http")]
pub use axum;
#[cfg(feature = "client")]
pub use child::{ChildProcess, Stderr, DEFAULT_CLOSE_TIMEOUT, DEFAULT_TERMINATE_TIMEOUT};
pub use connection::serve_connection;
#[cfg(all(feature = "http", feature = "redis"))]
pub use http::RedisStore;
#[cfg(feature = "http")]
pub use http::{
    EventStore, HttpConfig, McpHttp, MemoryEventStore, MemorySessionStore, Replay, SessionRecord,
    SessionStore, StoreFuture,
};
#[cfg(all(feature = "http", feature = "client"))]
pub use http_client::{
    HttpClientTransport, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_CONCURRENT_REQUESTS,
    DEFAULT_MAX_RESUMPTIONS,
};
pub use memory::{InMemory, RawConnection};
/// The rustls version [`HttpClientTransport::tls_config`] takes.
#[cfg(feature = "https")]
pub use rustls;
#[cfg(feature = "client")]
pub(crate) use wire::encode_header_value;
pub use wire::{
    Incoming, Lines, Outgoing, OutgoingKind, Transport, Wire, DEFAULT_CLIENT_MAX_MESSAGE_BYTES,
};
