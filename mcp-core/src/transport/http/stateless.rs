//! The 2026-07-28 wire: POST only, every request validated on its own, headers checked against
//! the body, statuses as the spec maps them.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::config::HttpConfig;
use super::headers::{self, Known};
use super::response;
use super::Next;
use crate::era::{RequestEnvelope, META_PROTOCOL_VERSION, REMOVED_IN_MODERN};
use crate::error::echo_capped;
use crate::error::{codes, McpError};
use crate::jsonrpc::{self, Decoded, RequestId};
use crate::lowlevel::dispatch::{self, Origin};
use crate::lowlevel::RunningServer;
use crate::lowlevel::{HttpRequest, Params, Peeked};

fn reply(status: StatusCode, id: &RequestId, e: McpError) -> Response {
    response::json(status, jsonrpc::encode_error(Some(id), &e.to_wire(false)))
}

fn mismatch(message: String) -> McpError {
    McpError::new(codes::HEADER_MISMATCH, message)
}

/// `params.name` (tools/call, prompts/get) or `params.uri` (resources/read).
fn named_target<'a>(method: &str, peeked: &'a Peeked) -> Option<&'a str> {
    let value = match method {
        "tools/call" | "prompts/get" => &peeked.name,
        "resources/read" => &peeked.uri,
        "tasks/get" | "tasks/update" | "tasks/cancel" => &peeked.task_id,
        _ => return None,
    };
    Some(value.as_ref().and_then(|v| v.as_str()).unwrap_or_default())
}

/// The checks of the 2026 transport, in the order the spec gives them; the request's envelope
/// (taken out of `peeked`, where the routing read it) when they pass.
pub(crate) fn validate<S: Send + Sync + 'static>(
    server: &RunningServer<S>,
    headers: &HeaderMap,
    known: &Known<'_>,
    method: &str,
    peeked: &mut Peeked,
    params: Option<&Params>,
) -> Result<RequestEnvelope, (StatusCode, McpError)> {
    let bad = |e| (StatusCode::BAD_REQUEST, e);
    let meta = peeked.meta.as_ref();
    let envelope = match peeked.envelope.take() {
        None => {
            return Err(bad(McpError::invalid_params(format!(
                "Invalid _meta: missing required {META_PROTOCOL_VERSION}"
            ))))
        }
        Some(envelope) => envelope,
    };
    if let Err(e) = &envelope {
        if e.code() == codes::INVALID_PARAMS {
            return Err(bad(McpError::new(e.code(), e.message().into_owned())));
        }
    }
    let body_version = match &envelope {
        Ok(envelope) => &*envelope.protocol_version,
        // Only a refused envelope is parsed here (the cache answered the others).
        Err(_) => meta
            .and_then(|m| m.parsed())
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(|v| v.as_str())
            .unwrap_or_default(),
    };
    match headers::text(known.protocol_version) {
        None => return Err(bad(mismatch("Header mismatch: missing MCP-Protocol-Version header".into()))),
        Some(h) if h.trim() != body_version => {
            return Err(bad(mismatch(format!(
                "Header mismatch: MCP-Protocol-Version header value '{}' does not match body value '{}'",
                echo_capped(h), echo_capped(body_version)
            ))))
        }
        Some(_) => {}
    }
    let envelope = envelope.map_err(bad)?;
    match headers::text(known.method) {
        None => {
            return Err(bad(mismatch(
                "Header mismatch: missing Mcp-Method header".into(),
            )))
        }
        Some(h) if h.trim() != method => {
            return Err(bad(mismatch(format!(
                "Header mismatch: Mcp-Method header value '{}' does not match body value '{}'",
                echo_capped(h),
                echo_capped(method)
            ))))
        }
        Some(_) => {}
    }
    if let Some(target) = named_target(method, peeked) {
        match headers::text(known.name).map(headers::decode_value) {
            None => {
                return Err(bad(mismatch(
                    "Header mismatch: missing Mcp-Name header".into(),
                )))
            }
            Some(Err(())) => {
                return Err(bad(mismatch(
                    "Header mismatch: Mcp-Name header is not valid base64".into(),
                )))
            }
            Some(Ok(h)) if h != target => {
                return Err(bad(mismatch(format!(
                    "Header mismatch: Mcp-Name header value '{}' does not match body value '{}'",
                    echo_capped(&h),
                    echo_capped(target)
                ))))
            }
            Some(Ok(_)) => {}
        }
    }
    if method == "tools/call" {
        check_param_headers(server, headers, peeked, params)?;
    }
    if REMOVED_IN_MODERN.contains(&method) || !server.server.has_request_handler(method) {
        return Err((StatusCode::NOT_FOUND, McpError::method_not_found(method)));
    }
    Ok(envelope)
}

/// `Mcp-Param-{Name}` headers against the arguments their tool's schema mirrors (`x-mcp-header`).
fn check_param_headers<S: Send + Sync + 'static>(
    server: &RunningServer<S>,
    headers: &HeaderMap,
    peeked: &Peeked,
    params: Option<&Params>,
) -> Result<(), (StatusCode, McpError)> {
    let Some(tool) = peeked.name.as_ref().and_then(|v| v.as_str()) else {
        return Ok(());
    };
    let Some(mirrored) = server.server.param_headers.get(tool) else {
        return Ok(());
    };
    // Parsed only for a tool that mirrors arguments into headers.
    let mut arguments = serde_json::Value::Null;
    if let Some(params) = params {
        params.members(|name, value| {
            // (A name with escapes may spell it too.)
            let named = name == "\"arguments\""
                || name.contains('\\')
                    && serde_json::from_str::<String>(name).is_ok_and(|n| n == "arguments");
            if named {
                arguments = serde_json::from_str(value).unwrap_or_default();
            }
        });
    }
    let bad = |m: String| Err((StatusCode::BAD_REQUEST, mismatch(m)));
    for (header, path) in mirrored.iter() {
        let mut value = &arguments;
        for key in path {
            value = &value[key.as_str()];
        }
        let expected = match value {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Bool(b) => Some(b.to_string()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let name = format!("mcp-param-{header}");
        let sent = headers.get(name.as_str());
        match (expected, sent) {
            (None, _) => {}
            (Some(_), None) => {
                return bad(format!(
                    "Header mismatch: missing Mcp-Param-{header} header"
                ))
            }
            (Some(expected), Some(raw)) => {
                let Ok(text) = raw.to_str() else {
                    return bad(format!(
                        "Header mismatch: Mcp-Param-{header} has invalid characters"
                    ));
                };
                match headers::decode_value(text) {
                    Err(()) => return bad(format!("Header mismatch: Mcp-Param-{header} is not valid base64")),
                    Ok(decoded) if !same_value(&decoded, &expected) => {
                        return bad(format!(
                            "Header mismatch: Mcp-Param-{header} header value '{}' does not match body value '{}'",
                            echo_capped(&decoded), echo_capped(&expected)
                        ))
                    }
                    Ok(_) => {}
                }
            }
        }
    }
    Ok(())
}

/// Equal as text, or as numbers (`42.0` equals `42`).
fn same_value(header: &str, body: &str) -> bool {
    header == body
        || matches!((header.parse::<f64>(), body.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
}

/// A 2026 POST as the endpoint read it.
pub(crate) struct Post<'a> {
    pub(crate) http: &'a Arc<HttpRequest>,
    /// Its headers the checks read, found once.
    pub(crate) known: &'a Known<'a>,
    pub(crate) message: super::Inbound,
    /// Its params' routed parts (and envelope), read once.
    pub(crate) peeked: Peeked,
}

/// Checks a 2026 POST and starts its handler. Not `async`: the message and its routed parts
/// stay on the stack, out of the future the connection holds for every request.
pub(crate) fn post<S: Send + Sync + 'static>(
    server: &Arc<RunningServer<S>>,
    config: &HttpConfig,
    request: Post<'_>,
) -> Next<'static> {
    let Post {
        http,
        known,
        message,
        mut peeked,
    } = request;
    let headers = http.headers();
    match message {
        Decoded::Response { .. } => {
            let e = McpError::invalid_request(
                "Invalid request: a 2026-07-28 client sends no responses",
            );
            Next::Respond(response::json(
                StatusCode::BAD_REQUEST,
                jsonrpc::encode_error(None, &e.to_wire(false)),
            ))
        }
        Decoded::Notification { method, params } => Next::Later(Box::pin(notified(
            server.clone(),
            http.clone(),
            config.request_timeout,
            method,
            params,
        ))),
        Decoded::Request { id, method, params } => {
            let envelope = match validate(
                server,
                headers,
                known,
                &method,
                &mut peeked,
                params.as_ref(),
            ) {
                Ok(envelope) => envelope,
                Err((status, e)) => return Next::Respond(reply(status, &id, e)),
            };
            let server = server.clone();
            let request_id = id.clone();
            let http = http.clone();
            // What the one pass over the body found in the params (where each member is,
            // whether this may be a retry) and the envelope the routing read: the engine
            // reads none of them again.
            let params = params.unwrap_or_default();
            let read = dispatch::Read {
                meta: peeked.meta,
                envelope: Some(envelope),
            };
            let answering = response::Answering::new(config, known.accept);
            Next::Running(response::start(
                answering,
                Some(id),
                None,
                move |sink| async move {
                    let origin = origin(&server, &sink, http);
                    dispatch::handle_read_request(origin, request_id, method, params, read).await
                },
            ))
        }
    }
}

/// A 2026 notification: it has no stream (what its handler sends is dropped) and is bounded
/// like a 2025 one, so a handler that hangs does not hold the connection.
async fn notified<S: Send + Sync + 'static>(
    server: Arc<RunningServer<S>>,
    http: Arc<HttpRequest>,
    limit: std::time::Duration,
    method: jsonrpc::Method,
    params: Option<Params>,
) -> Response {
    let sink = crate::lowlevel::Sink::discard();
    let handled = dispatch::handle_notification(
        origin(&server, &sink, http),
        method,
        params.unwrap_or_default(),
    );
    if super::lazy_timeout::timeout(limit, handled).await.is_none() {
        tracing::warn!("a notification handler ran past the request timeout");
    }
    StatusCode::ACCEPTED.into_response()
}

/// Where a 2026 message over HTTP comes from: no session (no session record, no session
/// hooks), only the request's own stream and HTTP parts.
fn origin<'a, S: Send + Sync + 'static>(
    server: &'a Arc<RunningServer<S>>,
    sink: &'a crate::lowlevel::Sink,
    http: Arc<HttpRequest>,
) -> Origin<'a, S> {
    Origin {
        server,
        session: None,
        sink,
        surface_internal: server.server.options.surface_internal_errors,
        http: Some(http),
    }
}
