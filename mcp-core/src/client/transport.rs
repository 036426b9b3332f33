//! [`IntoTransport`]: what [`ClientBuilder::connect`](super::ClientBuilder::connect) accepts.

use crate::lowlevel::Server;
use crate::server::McpServer;
use crate::transport::{InMemory, Transport};

/// Anything a client can connect through: a [`Transport`], or a server of this process (served
/// in memory, started on connect and stopped on close).
pub trait IntoTransport {
    /// The transport it becomes.
    type Transport: Transport;

    /// Converts; `surface_internal_errors` is the builder's
    /// [`raise_exceptions`](super::ClientBuilder::raise_exceptions), which only an in-process
    /// server can honour.
    fn into_transport(self, surface_internal_errors: bool) -> Self::Transport;
}

impl<T: Transport> IntoTransport for T {
    type Transport = T;

    fn into_transport(self, _surface_internal_errors: bool) -> T {
        self
    }
}

impl<S: Send + Sync + 'static> IntoTransport for Server<S> {
    type Transport = InMemory<Server<S>>;

    fn into_transport(self, surface_internal_errors: bool) -> Self::Transport {
        InMemory::new(self, surface_internal_errors)
    }
}

impl<S: Send + Sync + 'static> IntoTransport for McpServer<S> {
    type Transport = InMemory<McpServer<S>>;

    fn into_transport(self, surface_internal_errors: bool) -> Self::Transport {
        InMemory::new(self, surface_internal_errors)
    }
}
