//! [`Server`]: the handler table, keyed by method string, plus its configuration.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::cache::CacheHint;
use super::capabilities::ListChanged;
use super::context::{NotificationContext, RequestContext};
use super::handler::{erase_notification, erase_request, ErasedNotification, ErasedRequest};
use super::lifespan::Lifespan;
use super::middleware::{Incoming, Middleware, Next};
use super::session::Session;
use crate::error::McpError;
use crate::name_map::NameMap;
use crate::types::*;

/// A hook run when a session connects or closes.
pub(crate) type SessionHook = Arc<dyn Fn(Session) + Send + Sync>;

/// The message of the error returned when a handler for `initialize` is registered.
pub const RESERVED_INITIALIZE: &str = "'initialize' is handled by the server runner and cannot be overridden; use Server::middleware to observe or wrap initialization";

/// Limits and switches of the engine. Every default is named here.
///
/// New options may be added in a minor release: start from the defaults and change fields in
/// place, `server.options_mut().max_in_flight = 8;`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Requests one connection may have running at once; when reached, the engine stops
    /// reading from that connection until one finishes (backpressure). Default 64.
    pub max_in_flight: usize,
    /// Largest message accepted, in bytes; a longer stdio line is answered `-32600` and skipped.
    /// Default 4 MiB.
    pub max_message_bytes: usize,
    /// Surface the real text of internal failures (and panics) on the wire instead of
    /// `Internal server error`. For tests only. Default false.
    pub surface_internal_errors: bool,
    /// How long a 2025 handler waits for the client to answer an input request
    /// (`elicitation/create`, `sampling/createMessage`, `roots/list`). Default 5 minutes.
    pub input_timeout: std::time::Duration,
    /// Bytes of answers and notifications a byte-stream connection (stdio, [`Lines`] sockets
    /// served with `serve_connection`, in-memory) queues for a peer that does not read them.
    /// When reached, the connection stops reading new messages (backpressure) and handlers wait
    /// to send until the peer reads; one message larger than the bound is still queued whole.
    /// Default 1 MiB (hyper's write buffer is 400 KiB; batches are written 64 KiB at a time).
    ///
    /// [`Lines`]: crate::transport::Lines
    pub max_outbound_bytes: usize,
    /// How long a write to a byte-stream connection may make no progress (the peer reads
    /// nothing) before the connection is ended: its running requests are cancelled and
    /// `serve_stdio` returns an error (`TimedOut`). Default 30 seconds.
    pub write_timeout: std::time::Duration,
    /// How long a byte-stream connection waits, once its input ended (end of stdin), for the
    /// requests still running; those still running then are cancelled (they get no answer) and
    /// the connection ends. Default 10 seconds.
    ///
    /// On every transport, also how long a cancelled handler that watches its cancellation
    /// ([`RequestContext::cancelled`](super::RequestContext::cancelled)) may go on to clean up
    /// before it is dropped.
    pub shutdown_grace: std::time::Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            max_in_flight: 64,
            max_message_bytes: 4 * 1024 * 1024,
            surface_internal_errors: false,
            input_timeout: std::time::Duration::from_secs(300),
            max_outbound_bytes: 1024 * 1024,
            write_timeout: std::time::Duration::from_secs(30),
            shutdown_grace: std::time::Duration::from_secs(10),
        }
    }
}

/// The low-level MCP server: a raw table from method name to handler. Nothing is derived from
/// types and nothing is validated beyond decoding `params` into the handler's type.
///
/// `S` is the state the lifespan produces (`()` without one).
///
/// ```
/// use modelctx_core::lowlevel::{RequestContext, Server};
/// use modelctx_core::types::*;
/// use serde_json::json;
///
/// async fn list_tools(_: RequestContext, _: PaginatedRequestParams) -> modelctx_core::Result<ListToolsResult> {
///     Ok(ListToolsResult::new(vec![Tool::new(
///         "echo",
///         "Echo the text back.",
///         json!({"type": "object"}),
///     )]))
/// }
///
/// async fn call_tool(_: RequestContext, p: CallToolRequestParams) -> modelctx_core::Result<CallToolResult> {
///     Ok(CallToolResult::text(format!("{:?}", p.arguments)))
/// }
///
/// let mut server = Server::new("echo");
/// server.on_list_tools(list_tools).on_call_tool(call_tool);
/// assert_eq!(
///     serde_json::to_value(server.capabilities()).unwrap(),
///     json!({"tools": {"listChanged": false}})
/// );
/// ```
pub struct Server<S = ()> {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) requests: NameMap<ErasedRequest<S>>,
    pub(crate) notifications: NameMap<ErasedNotification<S>>,
    pub(crate) middleware: Vec<Arc<dyn Middleware<S>>>,
    pub(crate) lifespan: Lifespan<S>,
    pub(crate) on_connect: Vec<SessionHook>,
    pub(crate) on_close: Vec<SessionHook>,
    pub(crate) cache_hints: HashMap<String, CacheHint>,
    pub(crate) list_changed: ListChanged,
    pub(crate) extra_capabilities: ServerCapabilities,
    pub(crate) options: ServerOptions,
    pub(crate) param_headers: super::ParamHeaderTable,
    pub(crate) scopes: super::scopes::ScopeRules,
    pub(crate) sealer: Option<crate::request_state::Sealer>,
    pub(crate) events: crate::events::BusCell,
}

impl<S> std::fmt::Debug for Server<S> {
    /// The server's identity and the methods in its table (sorted); not handlers or state.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut requests: Vec<&str> = self.requests.keys().map(String::as_str).collect();
        requests.sort_unstable();
        let mut notifications: Vec<&str> = self.notifications.keys().map(String::as_str).collect();
        notifications.sort_unstable();
        f.debug_struct("Server")
            .field("name", &self.info.name)
            .field("version", &self.info.version)
            .field("requests", &requests)
            .field("notifications", &notifications)
            .field("middleware", &self.middleware.len())
            .finish_non_exhaustive()
    }
}

impl<S> Clone for Server<S> {
    fn clone(&self) -> Self {
        Self {
            info: self.info.clone(),
            instructions: self.instructions.clone(),
            requests: self.requests.clone(),
            notifications: self.notifications.clone(),
            middleware: self.middleware.clone(),
            lifespan: self.lifespan.clone(),
            on_connect: self.on_connect.clone(),
            on_close: self.on_close.clone(),
            cache_hints: self.cache_hints.clone(),
            list_changed: self.list_changed,
            extra_capabilities: self.extra_capabilities.clone(),
            options: self.options.clone(),
            param_headers: self.param_headers.clone(),
            scopes: self.scopes.clone(),
            sealer: self.sealer.clone(),
            events: self.events.clone(),
        }
    }
}

impl Server<()> {
    /// A server named `name` with no lifespan state.
    pub fn new(name: impl Into<String>) -> Self {
        Self::with_lifespan(name, || async { Ok(()) })
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// A server whose handlers see the state `enter` produces. `enter` runs once when serving
    /// starts; the state is dropped (and [`on_lifespan_exit`](Self::on_lifespan_exit) runs)
    /// once when serving stops.
    ///
    /// ```
    /// use modelctx_core::lowlevel::Server;
    /// struct Catalog { books: Vec<String> }
    ///
    /// let server = Server::with_lifespan("Bookshop", || async {
    ///     Ok(Catalog { books: vec!["Dune".into()] })
    /// });
    /// ```
    pub fn with_lifespan<F, Fut>(name: impl Into<String>, enter: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<S, McpError>> + Send + 'static,
    {
        Self::from_lifespan(name, Lifespan::new(enter))
    }

    /// A server whose handlers all share `state`, which exists already (a database pool, a
    /// catalog): handlers read it with [`RequestContext::state`](super::RequestContext::state).
    /// Every start of the server shares this one value; nothing runs at start or stop (use
    /// [`with_lifespan`](Self::with_lifespan) for state built when serving starts).
    ///
    /// ```
    /// use modelctx_core::lowlevel::Server;
    /// struct Catalog { books: Vec<String> }
    ///
    /// let server = Server::with_state("Bookshop", Catalog { books: vec!["Dune".into()] });
    /// ```
    pub fn with_state(name: impl Into<String>, state: S) -> Self {
        Self::from_lifespan(name, Lifespan::fixed(Arc::new(state)))
    }

    fn from_lifespan(name: impl Into<String>, lifespan: Lifespan<S>) -> Self {
        let mut server = Self {
            info: Implementation::new(name, ""),
            instructions: None,
            requests: NameMap::default(),
            notifications: NameMap::default(),
            middleware: Vec::new(),
            lifespan,
            on_connect: Vec::new(),
            on_close: Vec::new(),
            cache_hints: HashMap::new(),
            list_changed: ListChanged::default(),
            extra_capabilities: ServerCapabilities::default(),
            options: ServerOptions::default(),
            param_headers: super::ParamHeaderTable::default(),
            scopes: Default::default(),
            sealer: None,
            events: Default::default(),
        };
        server.install_builtins();
        server
    }

    fn install_builtins(&mut self) {
        self.on_ping(|_, _: RequestParams| async { Ok(EmptyResult::default()) });
        self.on_discover(|ctx, _: RequestParams| async move {
            let versions = crate::era::MODERN_VERSIONS.iter().map(|v| (*v).to_owned());
            let mut discovered =
                DiscoverResult::new(versions.collect(), ctx.server_capabilities().clone());
            discovered.instructions = ctx.instructions().map(str::to_owned);
            Ok(discovered)
        });
    }

    /// Sets the version reported in `serverInfo` (empty string when unset). Like every
    /// setter of the low-level server it works in place, so registration can sit in loops and
    /// branches; the rest of the identity (icons, website) is under [`info_mut`](Self::info_mut).
    pub fn version(&mut self, version: impl Into<String>) -> &mut Self {
        self.info.version = version.into();
        self
    }

    /// Sets the display title reported in `serverInfo`.
    pub fn title(&mut self, title: impl Into<String>) -> &mut Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the instructions sent in `initialize` and `server/discover`.
    pub fn instructions(&mut self, instructions: impl Into<String>) -> &mut Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Seals the `requestState` of 2026 `input_required` results (the one line that turns it
    /// on for a low-level server; [`McpServer`](crate::server::McpServer) seals by default).
    /// Handlers keep writing and reading their state in plain text
    /// ([`RequestContext::request_state`]); the wire carries it encrypted and bound to the
    /// request, together with earlier rounds' answers. See [`request_state`](crate::request_state).
    ///
    /// ```
    /// use modelctx_core::lowlevel::Server;
    /// use modelctx_core::request_state::KeyRing;
    ///
    /// let mut server = Server::new("forms");
    /// server.seal_request_state(KeyRing::random());
    /// ```
    pub fn seal_request_state(
        &mut self,
        sealer: impl Into<crate::request_state::Sealer>,
    ) -> &mut Self {
        self.sealer = Some(sealer.into());
        self
    }

    /// Stops sealing `requestState` (it then travels exactly as handlers write it, and earlier
    /// rounds' answers are not carried).
    pub fn unsealed_request_state(&mut self) -> &mut Self {
        self.sealer = None;
        self
    }

    /// The bus [`RequestContext::publish`] publishes on (default: a
    /// [`MemoryBus`](crate::events::MemoryBus) for this process). A low-level server delivers
    /// events only where its own handlers subscribe; [`McpServer`](crate::server::McpServer)
    /// delivers them to every session and listen stream.
    pub fn event_bus(&mut self, bus: impl crate::events::EventBus) -> &mut Self {
        self.events.set(Arc::new(bus));
        self
    }

    /// The bus events are published on.
    pub fn events(&self) -> Arc<dyn crate::events::EventBus> {
        self.events.get()
    }

    /// Runs `exit` once with the lifespan state when serving stops.
    pub fn on_lifespan_exit<F, Fut>(&mut self, exit: F) -> &mut Self
    where
        F: Fn(Arc<S>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.lifespan.exit = Some(Arc::new(move |s| Box::pin(exit(s))));
        self
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.info
    }

    /// Mutable access to the server's identity (title, icons, website).
    pub fn info_mut(&mut self) -> &mut Implementation {
        &mut self.info
    }

    /// The engine's limits and switches ([`ServerOptions`]); change them with
    /// [`options_mut`](Self::options_mut).
    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    /// The engine's limits and switches, to change: `server.options_mut().max_in_flight = 8;`.
    pub fn options_mut(&mut self) -> &mut ServerOptions {
        &mut self.options
    }

    /// Registers (or replaces) the handler of request `method`. `params` are decoded into `P`
    /// before the handler runs (`-32602` with a short reason when they do not fit); absent
    /// params decode as `{}`. The result is serialized as the JSON-RPC result.
    ///
    /// `initialize` is reserved and refused with [`RESERVED_INITIALIZE`].
    pub fn add_request_handler<P, R, F, Fut>(
        &mut self,
        method: impl Into<String>,
        handler: F,
    ) -> Result<&mut Self, McpError>
    where
        P: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
        F: Fn(RequestContext<S>, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, McpError>> + Send + 'static,
    {
        let method = method.into();
        if method == "initialize" {
            return Err(McpError::invalid_request(RESERVED_INITIALIZE));
        }
        self.requests.insert(method, erase_request(handler));
        Ok(self)
    }

    /// Registers (or replaces) the handler of notification `method`. It runs for every session,
    /// including sessions that connect later, and its context names the session the
    /// notification came from. Errors are logged (notifications are never answered).
    pub fn add_notification_handler<P, F, Fut>(
        &mut self,
        method: impl Into<String>,
        handler: F,
    ) -> &mut Self
    where
        P: DeserializeOwned + Send + 'static,
        F: Fn(NotificationContext<S>, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), McpError>> + Send + 'static,
    {
        self.notifications
            .insert(method.into(), erase_notification(handler));
        self
    }

    /// Installs an already-erased handler (the high-level registries use this).
    pub(crate) fn set_request_handler(&mut self, method: &str, handler: ErasedRequest<S>) {
        self.requests.insert(method.to_owned(), handler);
    }

    /// Removes the handler of request `method` (a later call answers `-32601`).
    pub fn remove_request_handler(&mut self, method: &str) -> &mut Self {
        self.requests.remove(method);
        self
    }

    /// True when request `method` has a handler.
    pub fn has_request_handler(&self, method: &str) -> bool {
        self.requests.contains_key(method)
    }

    /// Appends a middleware written as a closure `|msg, next| async move { .. }`; the first
    /// appended is the outermost. See [`Middleware`] for what it can do.
    pub fn middleware<F, Fut>(&mut self, middleware: F) -> &mut Self
    where
        F: Fn(Incoming<S>, Next<S>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<serde_json::Value, McpError>> + Send + 'static,
    {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Appends a middleware given as a type implementing [`Middleware`] (one with its own
    /// configuration, or shared by several servers). Closures go through
    /// [`middleware`](Self::middleware): Rust infers a closure's argument types only from a
    /// direct `Fn` bound, so one method for both would make every closure spell out its types.
    pub fn middleware_layer(&mut self, middleware: impl Middleware<S>) -> &mut Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Runs `hook` with each session when it connects (2025: once `initialize` is answered; a
    /// stdio or in-memory connection serving 2026: before its first request is handled). A 2026
    /// request over HTTP belongs to no session and runs no hook; code that must run around
    /// every request is a [`middleware`](Self::middleware).
    pub fn on_connect(&mut self, hook: impl Fn(Session) + Send + Sync + 'static) -> &mut Self {
        self.on_connect.push(Arc::new(hook));
        self
    }

    /// Runs `hook` with each session when it closes (after its in-flight requests finished).
    pub fn on_close(&mut self, hook: impl Fn(Session) + Send + Sync + 'static) -> &mut Self {
        self.on_close.push(Arc::new(hook));
        self
    }

    /// Sets the cache hint stamped on 2026 results of `method` (one of `server/discover`,
    /// `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`,
    /// `resources/read`). Default: [`CacheHint::default`] (`ttlMs: 0`, `cacheScope: "private"`).
    pub fn cache_hint(&mut self, method: impl Into<String>, hint: CacheHint) -> &mut Self {
        self.cache_hints.insert(method.into(), hint);
        self
    }

    /// Declares that the server sends `notifications/tools/list_changed`.
    pub fn tools_list_changed(&mut self, on: bool) -> &mut Self {
        self.list_changed.tools = on;
        self
    }

    /// Declares that the server sends `notifications/prompts/list_changed`.
    pub fn prompts_list_changed(&mut self, on: bool) -> &mut Self {
        self.list_changed.prompts = on;
        self
    }

    /// Declares that the server sends `notifications/resources/list_changed`.
    pub fn resources_list_changed(&mut self, on: bool) -> &mut Self {
        self.list_changed.resources = on;
        self
    }

    /// The table of tool arguments mirrored into `Mcp-Param-*` headers (`x-mcp-header` in
    /// their schema), which the HTTP transport checks against the body of a 2026 `tools/call`.
    /// Empty until filled: the high-level server keeps it in step with its tools; a low-level
    /// server that registers such a tool records it here (see [`ParamHeaderTable`](super::ParamHeaderTable)).
    pub fn param_headers(&self) -> &super::ParamHeaderTable {
        &self.param_headers
    }

    /// Requires the caller's token to carry `scopes` for every call of `method` (`target:
    /// None`), or for calls of `method` on one tool or prompt name or resource URI
    /// (`Some(target)`). A protected HTTP endpoint checks this before the handler runs, and a
    /// token without them gets 403 `insufficient_scope` naming the scopes to ask for. Without
    /// a resource server (stdio, in memory, an open endpoint) nothing is checked.
    ///
    /// ```
    /// let mut server = modelctx_core::lowlevel::Server::new("shop");
    /// server
    ///     .require_scopes("tools/list", None, ["books:read"])
    ///     .require_scopes("tools/call", Some("add_book"), ["books:write"]);
    /// ```
    pub fn require_scopes<I, T>(
        &mut self,
        method: &str,
        target: Option<&str>,
        scopes: I,
    ) -> &mut Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.insert(method, target, scopes);
        self
    }

    /// The scopes a call of `method` on `target` requires (see [`Self::require_scopes`]).
    pub fn required_scopes(&self, method: &str, target: Option<&str>) -> Vec<String> {
        self.scopes.required(method, target)
    }

    /// Adds capabilities that no handler implies (`experimental`, `extensions`).
    pub fn extra_capabilities(&mut self, capabilities: ServerCapabilities) -> &mut Self {
        self.extra_capabilities = capabilities;
        self
    }

    /// The capabilities this server advertises, derived from its handler table.
    pub fn capabilities(&self) -> ServerCapabilities {
        super::capabilities::derive(
            |m| self.requests.contains_key(m),
            &self.extra_capabilities,
            self.list_changed,
        )
    }
}
