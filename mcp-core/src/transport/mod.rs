//! Transports: bytes in, bytes out; nothing else.

#[cfg(feature = "http")]
mod http;
pub(crate) mod lines;
mod memory;
mod stdio;

#[cfg(feature = "http")]
pub use http::{serve_http, serve_http_on, HttpConfig, McpHttp};
pub(crate) use memory::start as start_memory;
pub use memory::RawConnection;
pub use stdio::serve_stdio;
