//! [`IntoServer`]: what every serving entry point accepts, so the low-level server and the
//! high-level one are served by the same functions.

use super::Server;

/// Anything that can be served: the low-level [`Server`] itself, or a higher-level server built
/// on one.
pub trait IntoServer {
    /// The lifespan state of the server.
    type State: Send + Sync + 'static;

    /// The handler table to serve.
    fn into_server(self) -> Server<Self::State>;
}

impl<S: Send + Sync + 'static> IntoServer for Server<S> {
    type State = S;

    fn into_server(self) -> Server<S> {
        self
    }
}
