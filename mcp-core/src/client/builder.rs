//! [`ClientBuilder`]: era, identity, capabilities and the raise-real-errors switch.

use crate::client::Client;
use crate::era::{Era, LATEST_PROTOCOL_VERSION, LEGACY_VERSIONS};
use crate::error::McpError;
use crate::serve::IntoServer;
use crate::types::{ClientCapabilities, Implementation};

/// Configures a [`Client`] before it connects.
///
/// Defaults: protocol version `2026-07-28` (stateless; no handshake), client info
/// `mcp-rust-client` with this crate's version, no capabilities, internal errors hidden, no
/// input callbacks, at most [`DEFAULT_MAX_INPUT_ROUNDS`](super::DEFAULT_MAX_INPUT_ROUNDS)
/// (8) rounds of `input_required` per request.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    pub(crate) protocol_version: String,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Implementation,
    pub(crate) raise_exceptions: bool,
    pub(crate) input: super::input::InputHandlers,
    pub(crate) max_input_rounds: usize,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            capabilities: ClientCapabilities::default(),
            client_info: Implementation::new("mcp-rust-client", env!("CARGO_PKG_VERSION")),
            raise_exceptions: false,
            input: Default::default(),
            max_input_rounds: super::input::DEFAULT_MAX_INPUT_ROUNDS,
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

    /// Answers the server's form requests (`elicitation/create`): 2025 server requests and
    /// 2026 `inputRequests` alike. Declares the `elicitation` capability (`{"form": {}}`) unless
    /// capabilities were set by hand with one.
    ///
    /// ```
    /// use mcp_core::client::Client;
    /// use mcp_core::types::ElicitResult;
    /// use serde_json::json;
    ///
    /// let builder = Client::builder().on_elicit(|params| async move {
    ///     println!("the server asks: {}", params.message);
    ///     Ok(ElicitResult {
    ///         action: "accept".into(),
    ///         content: json!({"name": "Ada"}).as_object().cloned(),
    ///         meta: None,
    ///     })
    /// });
    /// ```
    pub fn on_elicit<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(crate::types::ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<crate::types::ElicitResult, McpError>>
            + Send
            + 'static,
    {
        self.input.set_elicit(f);
        self.capabilities.elicitation.get_or_insert_with(|| {
            serde_json::json!({"form": {}})
                .as_object()
                .cloned()
                .unwrap_or_default()
        });
        self
    }

    /// Answers the server's sampling requests (`sampling/createMessage`) in both eras, and
    /// declares the `sampling` capability.
    pub fn on_sample<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(crate::types::CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<crate::types::CreateMessageResult, McpError>>
            + Send
            + 'static,
    {
        self.input.set_sample(f);
        self.capabilities
            .sampling
            .get_or_insert_with(Default::default);
        self
    }

    /// Answers the server's `roots/list` in both eras, and declares the `roots` capability.
    pub fn on_list_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<crate::types::ListRootsResult, McpError>>
            + Send
            + 'static,
    {
        self.input.set_roots(f);
        self.capabilities.roots.get_or_insert_with(Default::default);
        self
    }

    /// How many rounds of `input_required` one request may take before the client gives up
    /// with an error (2026). Default 8.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
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
