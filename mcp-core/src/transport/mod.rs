//! Transports: bytes in, bytes out; nothing else.

pub(crate) mod lines;
mod memory;
mod stdio;

pub(crate) use memory::start as start_memory;
pub use memory::RawConnection;
pub use stdio::serve_stdio;
