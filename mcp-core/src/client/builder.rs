//! [`ClientBuilder`]: era, identity, capabilities and the raise-real-errors switch.

use crate::client::Client;
use crate::era::{Era, LATEST_PROTOCOL_VERSION, LEGACY_VERSIONS};
use crate::error::McpError;
use crate::serve::IntoServer;
use crate::types::{ClientCapabilities, Implementation};

/// Configures a [`Client`] before it connects.
///
/// Defaults: protocol version `2026-07-28` (stateless; no handshake), client info
/// `mcp-rust-client` with this crate's version, no capabilities, internal errors hidden.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    pub(crate) protocol_version: String,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Implementation,
    pub(crate) raise_exceptions: bool,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            capabilities: ClientCapabilities::default(),
            client_info: Implementation::new("mcp-rust-client", env!("CARGO_PKG_VERSION")),
            raise_exceptions: false,
        }
    }
}

impl ClientBuilder {
    /// The protocol version to speak. A 2025 (or older) version makes the client send
    /// `initialize` when it connects; `2026-07-28` puts the envelope in every request's `_meta`.
    pub fn protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = version.into();
        self
    }

    /// Shorthand for `protocol_version("2025-11-25")`.
    pub fn legacy(self) -> Self {
        self.protocol_version(crate::era::LATEST_LEGACY_VERSION)
    }

    /// The capabilities the client declares.
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// The client's identity.
    pub fn client_info(mut self, info: Implementation) -> Self {
        self.client_info = info;
        self
    }

    /// Surface the real text of the server's internal errors (and panics) instead of
    /// `Internal server error`. For tests.
    pub fn raise_exceptions(mut self, on: bool) -> Self {
        self.raise_exceptions = on;
        self
    }

    /// The era the configured version belongs to.
    pub fn era(&self) -> Era {
        if LEGACY_VERSIONS.contains(&self.protocol_version.as_str()) {
            Era::Legacy
        } else {
            Era::Modern
        }
    }

    /// Starts `server` in this process and connects to it.
    pub async fn connect(self, server: impl IntoServer) -> Result<Client, McpError> {
        Client::start(self, server).await
    }
}
