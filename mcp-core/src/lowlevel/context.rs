//! [`RequestContext`] and [`NotificationContext`]: what a handler knows about the message it
//! serves, and how it talks back.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::session::Session;
use crate::era::{Era, META_SUBSCRIPTION_ID};
use crate::error::McpError;
use crate::jsonrpc::{self, RequestId};
use crate::lowlevel::RunningServer;
use crate::types::{
    ClientCapabilities, Implementation, LoggingLevel, LoggingMessageNotificationParams, Meta,
    ReadResourceResult, ServerCapabilities,
};

/// Everything known about one inbound message, shared by its contexts.
pub(crate) struct CallInfo<S> {
    pub(crate) id: Option<RequestId>,
    pub(crate) method: crate::jsonrpc::Method,
    /// `params._meta`, parsed the first time someone asks.
    pub(crate) meta: Option<crate::raw_meta::RawMeta>,
    pub(crate) era: Era,
    pub(crate) protocol_version: Arc<str>,
    pub(crate) client_capabilities: Arc<ClientCapabilities>,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) log_level: Option<LoggingLevel>,
    /// The session or connection the message belongs to; `None` for a 2026 request that
    /// stands alone (over HTTP; `RunningServer::handle_message`).
    pub(crate) session: Option<Session>,
    pub(crate) server: Arc<RunningServer<S>>,
    pub(crate) sink: super::Sink,
    /// The HTTP request the message arrived in (`None` on stdio and in memory).
    pub(crate) http: Option<Arc<super::HttpRequest>>,
    /// A 2026 retry's answers and state, and what sealing a next state needs (set just before
    /// the handler runs, when the request is a retry or the server seals its state; boxed, as
    /// most requests have none).
    pub(crate) round: std::sync::OnceLock<Box<crate::lowlevel::round::Round>>,
    /// The params of a 2026 request that is no retry, to a server that seals states: kept
    /// (shared, not copied) in case the handler asks for input and the state it seals has to
    /// be bound to them. Such a request needs no `round`.
    pub(crate) kept: std::sync::OnceLock<crate::shared_text::SharedText>,
    /// Fired when the request is cancelled (see `RequestContext::cancelled`).
    pub(crate) cancel: super::cancel::CancelSignal,
    /// The last progress value sent (notifications must increase).
    /// The last progress value sent; held while a report is sent, so reports from tasks
    /// sharing the context reach the wire in increasing order.
    pub(crate) last_progress: tokio::sync::Mutex<Option<f64>>,
}

impl<S> CallInfo<S> {
    /// A copy for a task's run of a tool (tasks extension): same client, era and request, the
    /// answers of `round`, and a cancellation and progress of its own.
    pub(crate) fn for_task(&self, round: crate::lowlevel::round::Round) -> Self {
        let info = Self {
            id: self.id.clone(),
            method: "tools/call".into(),
            meta: self.meta.clone(),
            era: self.era,
            protocol_version: self.protocol_version.clone(),
            client_capabilities: self.client_capabilities.clone(),
            client_info: self.client_info.clone(),
            log_level: self.log_level,
            session: self.session.clone(),
            server: self.server.clone(),
            sink: self.sink.clone(),
            http: self.http.clone(),
            round: Default::default(),
            kept: Default::default(),
            cancel: Default::default(),
            last_progress: Default::default(),
        };
        let _ = info.round.set(Box::new(round));
        info
    }

    async fn send_notification(&self, method: &str, params: Value) -> Result<(), McpError> {
        if self.cancel.is_fired() {
            // Nothing more goes out for a cancelled request.
            return Err(McpError::internal("the request was cancelled"));
        }
        let line = jsonrpc::encode_notification(method, Some(&params));
        self.sink
            .send(super::Outbound::Message(line))
            .await
            .map_err(|_| McpError::internal("the client is gone"))
    }
}

/// The context of one request: its id and `_meta`, the era and client it came from, the
/// server's lifespan state, and a way to send notifications on this request's stream.
///
/// ```no_run
/// # use modelctx_core::lowlevel::RequestContext;
/// # use modelctx_core::types::*;
/// async fn call_tool(ctx: RequestContext<()>, params: CallToolRequestParams)
///     -> modelctx_core::Result<CallToolResult>
/// {
///     ctx.progress(1).total(2).message("halfway").await;
///     ctx.log(LoggingLevel::Info, "still working").await?;
///     Ok(CallToolResult::text(format!("called {} as request {}", params.name, ctx.request_id())))
/// }
/// ```
pub struct RequestContext<S = ()> {
    pub(crate) info: Arc<CallInfo<S>>,
    id: RequestId,
}

impl<S> std::fmt::Debug for RequestContext<S> {
    /// The request's id, method and era; not the state or the connection.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("method", &self.info.method)
            .field("era", &self.info.era)
            .field("protocol_version", &self.info.protocol_version)
            .finish_non_exhaustive()
    }
}

impl<S> Clone for RequestContext<S> {
    fn clone(&self) -> Self {
        Self {
            info: self.info.clone(),
            id: self.id.clone(),
        }
    }
}

impl<S> RequestContext<S> {
    /// The context of a request (`None` for a notification, which has no id).
    pub(crate) fn new(info: Arc<CallInfo<S>>) -> Option<Self> {
        let id = info.id.clone()?;
        Some(Self { info, id })
    }
}

impl<S: Send + Sync + 'static> RequestContext<S> {
    /// The JSON-RPC id of this request.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// The method being served.
    pub fn method(&self) -> &str {
        &self.info.method
    }

    /// The request's inbound `params._meta`, if any.
    pub fn meta(&self) -> Option<&Meta> {
        self.info.meta.as_ref()?.parsed()
    }

    /// The caller's W3C Trace Context: `traceparent` (and `tracestate`) from the request's
    /// `params._meta` (SEP-414), when a valid one came. It is also recorded on the request's
    /// `tracing` span; an OpenTelemetry layer can make it the span's remote parent.
    pub fn trace_context(&self) -> Option<crate::trace::TraceContext> {
        crate::trace::TraceContext::from_meta(self.info.meta.as_ref()?.parsed()?)
    }

    /// The era this request is served in.
    pub fn era(&self) -> Era {
        self.info.era
    }

    /// The protocol version: the request's own (2026) or the session's negotiated one (2025).
    pub fn protocol_version(&self) -> &str {
        &self.info.protocol_version
    }

    /// What the client declared it can do (per request in 2026, per session in 2025).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.info.client_capabilities
    }

    /// Who the client says it is.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.info.client_info.as_deref()
    }

    /// The state the lifespan produced (`()` without a lifespan).
    pub fn state(&self) -> &S {
        self.info.server.state()
    }

    /// The session this request belongs to: a 2025 session (opened by `initialize`; over HTTP
    /// what `Mcp-Session-Id` names), or the stdio or in-memory connection a 2026 request came
    /// on. `None` for a 2026 request over HTTP (and one served by
    /// [`RunningServer::handle_message`]): the 2026 protocol has no sessions, and such a
    /// request belongs to nothing that outlives it. Everything about its client is on this
    /// context ([`client_info`](Self::client_info), [`client_capabilities`](Self::client_capabilities)).
    pub fn session(&self) -> Option<&Session> {
        self.info.session.as_ref()
    }

    /// The HTTP request this message arrived in: headers, extensions, peer address (`None` on
    /// stdio and in memory).
    #[cfg(feature = "http")]
    pub fn http(&self) -> Option<&super::HttpRequest> {
        self.info.http.as_deref()
    }

    /// Who is calling, as the HTTP endpoint's token verifier established it (`None` when the
    /// endpoint is not protected, and on stdio and in memory).
    #[cfg(feature = "http")]
    pub fn principal(&self) -> Option<&crate::auth::Principal> {
        self.info.http.as_deref()?.principal()
    }

    /// This server's identity.
    pub fn server_info(&self) -> &Implementation {
        self.info.server.info()
    }

    /// The capabilities this server advertises (derived from its handler table).
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        self.info.server.capabilities()
    }

    /// The server's instructions, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.info.server.instructions()
    }

    /// The `progressToken` of this request, if the client asked for progress (a string or an
    /// integer; any other value is ignored).
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta()?
            .get("progressToken")
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
    }

    /// Sends a request to the client on this request's own stream and waits for the answer
    /// (2025 server-to-client requests: `roots/list`, `sampling/createMessage`,
    /// `elicitation/create`, `ping`). Fails on the 2026 wire, which has no server-to-client
    /// requests, and when the client goes away first.
    pub async fn request<P: Serialize, R: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: P,
    ) -> Result<R, McpError> {
        if self.info.era != Era::Legacy {
            return Err(McpError::internal(
                "server-to-client requests exist only in a 2025 session (initialize)",
            ));
        }
        // A cancelled request cleaning up says nothing more to the client.
        if self.info.cancel.is_fired() {
            return Err(McpError::internal("the request was cancelled"));
        }
        let Some(session) = &self.info.session else {
            return Err(McpError::internal(
                "server-to-client requests need a session; this request has none",
            ));
        };
        session.request_via(&self.info.sink, method, params).await
    }

    /// Publishes a change event to every subscriber (both eras; every replica when the bus is
    /// shared), e.g. `Event::ResourceUpdated { uri }` after a tool changed a resource.
    pub fn publish(&self, event: crate::events::Event) -> Result<(), McpError> {
        self.info.server.server.events.publish(event)
    }

    /// Whether no middleware will see this request's result: a handler may then answer with
    /// a result encoded before the request came (the high-level `tools/list`), which no
    /// middleware could read without parsing it again.
    pub(crate) fn unobserved(&self) -> bool {
        self.info.server.middleware().is_empty()
    }

    /// Ends this request's SSE stream now, on the 2025 HTTP transport: the request goes on, and
    /// the client reconnects with `GET` + `Last-Event-ID` to receive the rest (SSE polling).
    /// Elsewhere it does nothing.
    pub async fn close_stream(&self) {
        if self.info.cancel.is_fired() {
            return;
        }
        let _ = self.info.sink.send(super::Outbound::Close).await;
    }

    /// Reads one of this server's own resources through its `resources/read` handler (whatever
    /// serves it: the high-level registry or a hand-written handler).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let handler = self
            .info
            .server
            .server
            .requests
            .get("resources/read")
            .cloned()
            .ok_or_else(|| McpError::method_not_found("resources/read"))?;
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        let value = handler(
            self.clone(),
            super::Params::from_value(Value::Object(params)),
        )
        .await?
        .into_value();
        Ok(serde_json::from_value(value)?)
    }

    /// Sends a notification on this request's stream. On a 2026 `subscriptions/listen` stream
    /// the notification is tagged with the subscription id.
    pub async fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<(), McpError> {
        let mut params = serde_json::to_value(params)?;
        if self.info.era == Era::Modern && self.info.method == "subscriptions/listen" {
            if let Value::Object(map) = &mut params {
                let meta = map
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert(META_SUBSCRIPTION_ID.into(), self.request_id().to_value());
                }
            }
        }
        self.info.send_notification(method, params).await
    }

    /// Sends a log message to the client when it asked for this level: on 2025 the session's
    /// `logging/setLevel` (everything when none was set), on 2026 only when the request's
    /// `_meta` names a `logLevel`. Needs the `logging` capability (an `on_set_logging_level`
    /// handler); otherwise does nothing.
    pub async fn log<D: Serialize>(&self, level: LoggingLevel, data: D) -> Result<(), McpError> {
        self.log_as(level, None, data).await
    }

    /// [`log`](Self::log) with a logger name.
    pub async fn log_as<D: Serialize>(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: D,
    ) -> Result<(), McpError> {
        if !self.wants_log(level) {
            return Ok(());
        }
        let mut params = LoggingMessageNotificationParams::new(level, serde_json::to_value(data)?);
        params.logger = logger.map(str::to_owned);
        self.notify("notifications/message", params).await
    }

    fn wants_log(&self, level: LoggingLevel) -> bool {
        if self.server_capabilities().logging.is_none() {
            return false;
        }
        let threshold = match self.info.era {
            Era::Modern => self.info.log_level,
            Era::Legacy => Some(
                self.info
                    .session
                    .as_ref()
                    .and_then(Session::log_level)
                    .unwrap_or(LoggingLevel::Debug),
            ),
        };
        threshold.is_some_and(|t| level >= t)
    }
}

/// The context of one notification: where it came from.
pub struct NotificationContext<S = ()> {
    pub(crate) info: Arc<CallInfo<S>>,
}

impl<S> std::fmt::Debug for NotificationContext<S> {
    /// The notification's method and era.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotificationContext")
            .field("method", &self.info.method)
            .field("era", &self.info.era)
            .finish_non_exhaustive()
    }
}

impl<S> Clone for NotificationContext<S> {
    fn clone(&self) -> Self {
        Self {
            info: self.info.clone(),
        }
    }
}

impl<S: Send + Sync + 'static> NotificationContext<S> {
    /// The notification's method.
    pub fn method(&self) -> &str {
        &self.info.method
    }

    /// The HTTP request this notification arrived in (`None` on stdio and in memory).
    #[cfg(feature = "http")]
    pub fn http(&self) -> Option<&super::HttpRequest> {
        self.info.http.as_deref()
    }

    /// Who sent it, as the HTTP endpoint's token verifier established it.
    #[cfg(feature = "http")]
    pub fn principal(&self) -> Option<&crate::auth::Principal> {
        self.info.http.as_deref()?.principal()
    }

    /// The session or connection the notification came from (`None` for a 2026 notification
    /// over HTTP, which belongs to no session; see [`RequestContext::session`]).
    pub fn session(&self) -> Option<&Session> {
        self.info.session.as_ref()
    }

    /// The notification's `params._meta`, if any.
    pub fn meta(&self) -> Option<&Meta> {
        self.info.meta.as_ref()?.parsed()
    }

    /// The sender's W3C Trace Context from `params._meta`, as
    /// [`RequestContext::trace_context`] reads it.
    pub fn trace_context(&self) -> Option<crate::trace::TraceContext> {
        crate::trace::TraceContext::from_meta(self.info.meta.as_ref()?.parsed()?)
    }

    /// The era of the message.
    pub fn era(&self) -> Era {
        self.info.era
    }

    /// The lifespan state.
    pub fn state(&self) -> &S {
        self.info.server.state()
    }
}
