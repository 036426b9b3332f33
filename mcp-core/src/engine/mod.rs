//! The engine: a started server (lifespan entered, capabilities computed, table frozen) and the
//! path every message takes through it.
//!
//! ```text
//! bytes -> jsonrpc::decode -> era (2025 session | 2026 _meta) -> middleware -> table
//!       -> params decoded -> handler -> result stamped for the era -> jsonrpc encode -> bytes
//! ```

pub(crate) mod connection;
pub(crate) mod dispatch;
mod stamp;
pub(crate) mod unwind;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::McpError;
use crate::lowlevel::{Middleware, Server};
use crate::types::{Implementation, ServerCapabilities};

pub use connection::serve_connection;

/// A server that has started: its lifespan state exists and its table is frozen.
///
/// Transports share one `RunningServer` between all their connections; [`stop`](Self::stop)
/// exits the lifespan once.
pub struct RunningServer<S> {
    pub(crate) server: Server<S>,
    middleware: Arc<[Arc<dyn Middleware<S>>]>,
    capabilities: ServerCapabilities,
    state: Arc<S>,
    stopped: AtomicBool,
}

impl<S: Send + Sync + 'static> RunningServer<S> {
    /// Enters the lifespan and freezes the table.
    pub async fn start(server: Server<S>) -> Result<Arc<Self>, McpError> {
        let state = (server.lifespan.enter)().await?;
        Ok(Arc::new(Self {
            capabilities: server.capabilities(),
            middleware: server.middleware.clone().into(),
            server,
            state: Arc::new(state),
            stopped: AtomicBool::new(false),
        }))
    }

    /// Exits the lifespan (once; later calls do nothing).
    pub async fn stop(&self) {
        if self.stopped.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(exit) = &self.server.lifespan.exit {
            exit(self.state.clone()).await;
        }
    }

    /// The lifespan state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.server.info
    }

    /// The advertised capabilities.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.capabilities
    }

    /// The instructions, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.server.instructions.as_deref()
    }

    pub(crate) fn middleware(&self) -> &Arc<[Arc<dyn Middleware<S>>]> {
        &self.middleware
    }
}
