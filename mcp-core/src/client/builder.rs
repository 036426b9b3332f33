//! [`ClientBuilder`]: era, identity, capabilities, callbacks, handlers and timeouts.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::notify::{NotificationHandlers, ServerNotification};
use super::transport::IntoTransport;
use crate::client::Client;
use crate::era::{Era, LATEST_LEGACY_VERSION, LATEST_PROTOCOL_VERSION, LEGACY_VERSIONS};
use crate::error::McpError;
use crate::types::{ClientCapabilities, Implementation};

/// How long a request waits for its answer by default (60 s; progress restarts the clock).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the `server/discover` probe of era negotiation waits before trying `initialize`
/// (10 s).
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which protocol era the client speaks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EraChoice {
    /// Find out (default): `server/discover` first; a server that does not answer it gets
    /// `initialize` with `2025-11-25` (the server may negotiate down to `2024-11-05`).
    #[default]
    Auto,
    /// Speak exactly this version: a 2026 version puts the envelope in every request's
    /// `_meta` (no request at connect); a 2025 or older one sends `initialize`.
    Pinned(String),
}

/// Configures a [`Client`] before it connects.
///
/// Defaults: the era found by negotiation ([`EraChoice::Auto`]), client info
/// `mcp-rust-client` with this crate's version, no capabilities beyond those the callbacks
/// declare, a 60 s timeout per request (restarted by progress; `subscriptions/listen` has
/// none), a 10 s `server/discover` probe, at most
/// [`DEFAULT_MAX_INPUT_ROUNDS`](super::DEFAULT_MAX_INPUT_ROUNDS) (8) rounds of
/// `input_required` per request, no result cache, internal errors hidden.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    pub(crate) era: EraChoice,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Implementation,
    pub(crate) raise_exceptions: bool,
    pub(crate) input: super::input::InputHandlers,
    pub(crate) notifications: NotificationHandlers,
    pub(crate) max_input_rounds: usize,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) probe_timeout: Duration,
    pub(crate) cache: bool,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            era: EraChoice::Auto,
            capabilities: ClientCapabilities::default(),
            client_info: Implementation::new("mcp-rust-client", env!("CARGO_PKG_VERSION")),
            raise_exceptions: false,
            input: Default::default(),
            notifications: Default::default(),
            max_input_rounds: super::input::DEFAULT_MAX_INPUT_ROUNDS,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            cache: false,
        }
    }
}

impl ClientBuilder {
    /// Pins the protocol version instead of negotiating. A 2025 (or older) version makes the
    /// client send `initialize` when it connects; `2026-07-28` puts the envelope in every
    /// request's `_meta`.
    pub fn protocol_version(mut self, version: impl Into<String>) -> Self {
        self.era = EraChoice::Pinned(version.into());
        self
    }

    /// Shorthand for `protocol_version("2025-11-25")`.
    pub fn legacy(self) -> Self {
        self.protocol_version(LATEST_LEGACY_VERSION)
    }

    /// Shorthand for `protocol_version("2026-07-28")`.
    pub fn modern(self) -> Self {
        self.protocol_version(LATEST_PROTOCOL_VERSION)
    }

    /// Chooses the era: [`EraChoice::Auto`] (default) or a pinned version.
    pub fn era_choice(mut self, choice: EraChoice) -> Self {
        self.era = choice;
        self
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
    /// `Internal server error`. For tests of an in-memory server; other servers decide this
    /// themselves.
    pub fn raise_exceptions(mut self, on: bool) -> Self {
        self.raise_exceptions = on;
        self
    }

    /// Answers the server's form requests (`elicitation/create`): 2025 server requests and
    /// 2026 `inputRequests` alike. Declares the `elicitation` capability (`{"form": {}}`) unless
    /// capabilities were set by hand with one.
    ///
    /// ```
    /// use modelctx_core::client::Client;
    /// use modelctx_core::types::ElicitResult;
    /// use serde_json::json;
    ///
    /// let builder = Client::builder().on_elicit(|params| async move {
    ///     println!("the server asks: {}", params.message);
    ///     Ok(ElicitResult::accept(json!({"name": "Ada"})))
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

    /// Calls `f` for every notification of `method` the server sends (on any stream), in the
    /// order they arrive. `f` runs on the connection's reader: keep it short, or hand the work
    /// to a task. Several handlers for one method all run.
    ///
    /// ```
    /// use modelctx_core::client::Client;
    ///
    /// let builder = Client::builder()
    ///     .on_notification("notifications/tools/list_changed", |_| println!("tools changed"));
    /// ```
    pub fn on_notification<F>(mut self, method: &str, f: F) -> Self
    where
        F: Fn(&ServerNotification) + Send + Sync + 'static,
    {
        self.notifications.add(Some(method), Arc::new(f));
        self
    }

    /// Calls `f` for every notification the server sends, whatever its method.
    pub fn on_any_notification<F>(mut self, f: F) -> Self
    where
        F: Fn(&ServerNotification) + Send + Sync + 'static,
    {
        self.notifications.add(None, Arc::new(f));
        self
    }

    /// Calls `f` with the URI of every `notifications/resources/updated`.
    pub fn on_resource_updated<F>(self, f: F) -> Self
    where
        F: Fn(&str) + Send + Sync + 'static,
    {
        self.on_notification("notifications/resources/updated", move |n| {
            if let Some(uri) = n.params.get("uri").and_then(Value::as_str) {
                f(uri);
            }
        })
    }

    /// Calls `f` with every log message (`notifications/message`).
    pub fn on_log_message<F>(self, f: F) -> Self
    where
        F: Fn(crate::types::LoggingMessageNotificationParams) + Send + Sync + 'static,
    {
        self.on_notification("notifications/message", move |n| {
            if let Ok(params) = serde_json::from_value(n.params.clone()) {
                f(params);
            }
        })
    }

    /// How many rounds of `input_required` one request may take before the client gives up
    /// with an error (2026). Default 8.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// How long a request waits for its answer (default 60 s; `None`: forever). Progress
    /// notifications for the request restart the clock; `subscriptions/listen` never times
    /// out. A request that times out is cancelled on the wire and fails with an error saying
    /// so. [`RequestOptions::timeout`](super::RequestOptions::timeout) overrides it per request.
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long era negotiation waits for `server/discover` before trying `initialize`
    /// (default 10 s).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// Keeps the cacheable results of a 2026 server (`server/discover`, the lists,
    /// `resources/read`) for their `ttlMs` and answers repeated requests from the cache
    /// (default off). `private` results are kept too: a client is one authorization context.
    /// List-changed and resource-updated notifications drop what they make stale.
    pub fn cache_results(mut self, on: bool) -> Self {
        self.cache = on;
        self
    }

    /// The era of a pinned version (`None` while negotiating).
    pub fn era(&self) -> Option<Era> {
        match &self.era {
            EraChoice::Auto => None,
            EraChoice::Pinned(v) if LEGACY_VERSIONS.contains(&v.as_str()) => Some(Era::Legacy),
            EraChoice::Pinned(_) => Some(Era::Modern),
        }
    }

    /// Connects through `transport`: a [`ChildProcess`](crate::transport::ChildProcess), an
    /// [`HttpClientTransport`](crate::transport::HttpClientTransport), a server of this
    /// process (`lowlevel::Server` or `McpServer`, served in memory), or any
    /// [`Transport`](crate::transport::Transport). Negotiates the era unless one is pinned.
    pub async fn connect(self, transport: impl IntoTransport) -> Result<Client, McpError> {
        let surface = self.raise_exceptions;
        Client::start(self, transport.into_transport(surface)).await
    }
}
