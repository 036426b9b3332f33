//! The `tracing` span of one inbound request or notification, with fields named after the
//! OpenTelemetry semantic conventions for MCP (server side).
//!
//! | field | value |
//! |---|---|
//! | `otel.name` | `{mcp.method.name} {target}` (target: the tool or prompt name), else the method |
//! | `otel.kind` | `server` |
//! | `otel.status_code` | `ok`, or `error` for a JSON-RPC error or a tool result with `isError` |
//! | `mcp.method.name` | the method |
//! | `jsonrpc.request.id` | the request id (requests only) |
//! | `mcp.session.id` | the session id (2025 sessions: the `Mcp-Session-Id` over HTTP) |
//! | `mcp.protocol.version` | the protocol version the message is served with |
//! | `gen_ai.operation.name` | `execute_tool` for `tools/call` |
//! | `gen_ai.tool.name` / `gen_ai.prompt.name` / `mcp.resource.uri` | the target |
//! | `error.type` | the JSON-RPC error code, or `tool_error` |
//! | `rpc.response.status_code` | the JSON-RPC error code, as a string |
//! | `mcp.server.operation.duration` | seconds from receipt to the answer |
//! | `traceparent` / `tracestate` | the caller's W3C Trace Context from `params._meta` |
//!
//! Nothing is allocated or parsed when no subscriber wants the span: every field starts
//! `Empty` and is recorded only on an enabled span.

use std::time::Instant;

use serde_json::Value;
use tracing::field::Empty;
use tracing::Span;

use crate::era::Era;
use crate::jsonrpc::RequestId;
use crate::lowlevel::{CallInfo, Params};
use crate::raw_meta::RawMeta;
use crate::trace::TraceContext;

/// The `tracing` target of the spans (stable, whatever the module layout): filter with
/// `modelctx_core::span=info`.
pub(crate) const SPAN_TARGET: &str = "modelctx_core::span";

macro_rules! mcp_span {
    ($name:literal) => {
        tracing::info_span!(
            target: SPAN_TARGET,
            $name,
            otel.name = Empty,
            otel.kind = "server",
            otel.status_code = Empty,
            mcp.method.name = Empty,
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            mcp.protocol.version = Empty,
            gen_ai.operation.name = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            mcp.resource.uri = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            mcp.server.operation.duration = Empty,
            traceparent = Empty,
            tracestate = Empty,
        )
    };
}

/// The span of one message and when it arrived (only when the span is enabled).
pub(crate) struct CallSpan {
    span: Span,
    started: Option<Instant>,
}

impl CallSpan {
    /// The span of a request (`mcp.server.request`).
    pub(crate) fn request(
        id: &RequestId,
        method: &str,
        params: &Params,
        meta: Option<&RawMeta>,
    ) -> Self {
        let this = Self::begin(mcp_span!("mcp.server.request"), method, params, meta);
        if this.started.is_some() {
            match id {
                RequestId::Number(n) => this
                    .span
                    .record("jsonrpc.request.id", n.to_string().as_str()),
                RequestId::String(s) => this.span.record("jsonrpc.request.id", &**s),
            };
        }
        this
    }

    /// The span of a notification (`mcp.server.notification`).
    pub(crate) fn notification(method: &str, params: &Params, meta: Option<&RawMeta>) -> Self {
        Self::begin(mcp_span!("mcp.server.notification"), method, params, meta)
    }

    fn begin(span: Span, method: &str, params: &Params, meta: Option<&RawMeta>) -> Self {
        if span.is_disabled() {
            return Self {
                span,
                started: None,
            };
        }
        span.record("mcp.method.name", method);
        let target = target(method, params);
        let name = match (method, &target) {
            ("tools/call" | "prompts/get", Some(name)) => format!("{method} {name}"),
            _ => method.to_owned(),
        };
        span.record("otel.name", name);
        match (method, target) {
            ("tools/call", Some(name)) => {
                span.record("gen_ai.operation.name", "execute_tool");
                span.record("gen_ai.tool.name", name);
            }
            ("prompts/get", Some(name)) => {
                span.record("gen_ai.prompt.name", name);
            }
            ("resources/read" | "resources/subscribe" | "resources/unsubscribe", Some(uri)) => {
                span.record("mcp.resource.uri", uri);
            }
            _ => {}
        }
        if let Some(tc) = meta
            .and_then(RawMeta::parsed)
            .and_then(TraceContext::from_meta)
        {
            span.record("traceparent", tc.traceparent());
            if let Some(state) = tc.tracestate() {
                span.record("tracestate", state);
            }
        }
        Self {
            span,
            started: Some(Instant::now()),
        }
    }

    /// The span, to enter while the handler runs (handler spans and events nest under it).
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// True when no subscriber wants the span.
    pub(crate) fn is_disabled(&self) -> bool {
        self.started.is_none()
    }

    /// Records what classification established: the protocol version and (2025) the session.
    pub(crate) fn describe<S>(&self, info: &CallInfo<S>) {
        if self.is_disabled() {
            return;
        }
        self.span
            .record("mcp.protocol.version", &*info.protocol_version);
        if let (Era::Legacy, Some(session)) = (info.era, &info.session) {
            self.span.record("mcp.session.id", session.id());
        }
    }

    /// The message was served: `result` is the answer (a tool result with `isError` counts as
    /// a failure, `error.type` `tool_error`).
    /// The message succeeded (`tool_error`: a tool result with `isError: true`).
    pub(crate) fn succeeded(&self, tool_error: bool) {
        if self.is_disabled() {
            return;
        }
        if tool_error {
            self.span.record("error.type", "tool_error");
            self.span.record("otel.status_code", "error");
        } else {
            self.span.record("otel.status_code", "ok");
        }
        self.end();
    }

    /// The message failed with JSON-RPC error `code`.
    pub(crate) fn failed(&self, code: i32) {
        if self.is_disabled() {
            return;
        }
        let code = code.to_string();
        self.span.record("error.type", code.as_str());
        self.span.record("rpc.response.status_code", code.as_str());
        self.span.record("otel.status_code", "error");
        self.end();
    }

    fn end(&self) {
        if let Some(started) = self.started {
            self.span.record(
                "mcp.server.operation.duration",
                started.elapsed().as_secs_f64(),
            );
        }
    }
}

/// `params.name` or `params.uri`, read only for an enabled span.
fn target(method: &str, params: &Params) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(default)]
        name: Option<Value>,
        #[serde(default)]
        uri: Option<Value>,
    }
    let peek = match method {
        "tools/call"
        | "prompts/get"
        | "resources/read"
        | "resources/subscribe"
        | "resources/unsubscribe" => params.decode::<Peek>().ok()?,
        _ => return None,
    };
    match method {
        "tools/call" | "prompts/get" => peek.name,
        _ => peek.uri,
    }
    .and_then(|v| match v {
        Value::String(s) => Some(s),
        _ => None,
    })
}
