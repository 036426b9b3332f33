//! Transports: bytes in, bytes out; nothing else.

#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod lines;
mod memory;
mod stdio;

/// The axum version the HTTP transport is built on, for mounting [`McpHttp::router`].
#[cfg(feature = "http")]
pub use axum;
#[cfg(feature = "http")]
pub use http::{serve_http, serve_http_on, HttpConfig, McpHttp};
pub(crate) use memory::start as start_memory;
pub use memory::RawConnection;
pub use stdio::serve_stdio;
