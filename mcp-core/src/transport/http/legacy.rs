//! The 2025-11-25 wire: `initialize` opens a session named by `Mcp-Session-Id`; POST for
//! messages, GET for the standalone stream, DELETE to end; idle sessions expire.

use std::sync::Arc;
use std::time::Instant;

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::sync::OwnedSemaphorePermit;

use super::headers;
use super::response::{self, error, Answering};
use super::sessions::{client_of, lock, reserve, HttpSession, Shared};
use super::store::now_ms;
use crate::era::LEGACY_VERSIONS;
use crate::error::echo_capped;
use crate::error::McpError;
use crate::jsonrpc::{Decoded, RequestId};
use crate::lowlevel::dispatch::{self, run_hooks, Origin};
use crate::lowlevel::{HttpRequest, Params};
use crate::random_id::random_id;
use crate::types::CancelledNotificationParams;

pub(crate) async fn post<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    session_id: Option<&str>,
    http: &Arc<HttpRequest>,
    message: super::Inbound,
) -> Response {
    let headers = http.headers();
    if let Some(version) = headers::get(headers, "mcp-protocol-version") {
        if !LEGACY_VERSIONS.contains(&version) {
            return error(
                StatusCode::BAD_REQUEST,
                None,
                McpError::invalid_request(format!(
                    "Bad Request: unsupported MCP-Protocol-Version {} in a 2025-11-25 session \
                     (a 2026-07-28 request carries its _meta envelope and no session)",
                    echo_capped(version)
                )),
            );
        }
    }
    let session = match session_id {
        Some(id) => match shared.get(id, http).await {
            Ok(Some(session)) => session,
            Ok(None) => return StatusCode::NOT_FOUND.into_response(),
            Err(e) => return store_failed(e),
        },
        None => match &message {
            Decoded::Request { method, .. } if method == "initialize" => {
                return initialize(shared, http, message).await
            }
            Decoded::Request { id, .. } => {
                return error(
                    StatusCode::BAD_REQUEST,
                    Some(id),
                    McpError::invalid_request(
                        "Bad Request: missing Mcp-Session-Id; send initialize first",
                    ),
                )
            }
            _ => {
                return error(
                    StatusCode::BAD_REQUEST,
                    None,
                    McpError::invalid_request("Bad Request: missing Mcp-Session-Id"),
                )
            }
        },
    };
    *lock(&session.last_seen) = Instant::now();
    let response = handle(shared, &session, http, message).await;
    // What the message changed (log level, subscriptions, readiness) reaches the other
    // replicas through the session store.
    if let Err(e) = shared.save(&session).await {
        tracing::warn!(error = %e, "the session store could not be updated");
    }
    response
}

/// 503 with a JSON-RPC error: the session store ([`HttpConfig::session_store`]) failed.
///
/// [`HttpConfig::session_store`]: super::HttpConfig::session_store
pub(super) fn store_failed(e: McpError) -> Response {
    tracing::error!(error = %e, "the session store failed");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        McpError::internal("Service Unavailable: the session store cannot be reached"),
    )
}

async fn handle<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    session: &Arc<HttpSession>,
    http: &Arc<HttpRequest>,
    message: super::Inbound,
) -> Response {
    match message {
        Decoded::Response { id, outcome } => {
            let answer = match &outcome {
                Ok(result) => crate::jsonrpc::encode_result(&id, result),
                Err(e) => crate::jsonrpc::encode_error(Some(&id), e),
            };
            if !session.session.resolve(&id, outcome) {
                // Another replica may have asked: the store hands the answer on to it.
                if let Some(store) = &shared.config.session_store {
                    match store.forward_answer(session.session.id(), &answer).await {
                        Ok(true) => {}
                        Ok(false) => tracing::debug!(
                            "a response answered no request waiting here, and the session \
                             store forwards no answers to other replicas"
                        ),
                        Err(e) => tracing::warn!(error = %e, "an answer could not be forwarded"),
                    }
                }
            }
            StatusCode::ACCEPTED.into_response()
        }
        Decoded::Notification { method, params } => {
            if method == "notifications/cancelled" {
                let cancelled = params
                    .as_ref()
                    .and_then(|p| p.decode::<CancelledNotificationParams>().ok())
                    .and_then(|p| p.request_id);
                if let Some(id) = cancelled {
                    session.in_flight.cancel(&id);
                }
            }
            let sink = session.session.outbound_sender();
            let origin = Origin {
                server: &shared.server,
                session: Some(&session.session),
                sink: &sink,
                surface_internal: shared.server.server.options.surface_internal_errors,
                http: Some(http.clone()),
            };
            let timeout = shared.config.request_timeout;
            if tokio::time::timeout(
                timeout,
                dispatch::handle_notification(origin, method, params.unwrap_or_default()),
            )
            .await
            .is_err()
            {
                tracing::warn!("a notification handler ran past the request timeout");
            }
            StatusCode::ACCEPTED.into_response()
        }
        Decoded::Request { id, method, params } => {
            run_request(shared, session.clone(), http.clone(), id, method, params).await
        }
    }
}

/// A request's claim on its session: its id (a second request with it is refused) and one of
/// the session's in-flight slots, given back however the request ends (answered, timed out,
/// cancelled).
struct InFlightEntry {
    session: Arc<HttpSession>,
    id: RequestId,
    _slot: Option<OwnedSemaphorePermit>,
}

impl Drop for InFlightEntry {
    fn drop(&mut self) {
        self.session.in_flight.finish(&self.id);
        lock(&self.session.ids).remove(&self.id);
    }
}

/// Claims `id` and one of the session's in-flight slots. A duplicate id is refused at once
/// (-32600, as on stdio); over [`ServerOptions::max_in_flight`](crate::lowlevel::ServerOptions)
/// the request waits for a slot, as stdio stops reading (backpressure), and only a request that
/// waits longer than `wait` is refused (429, -32600).
async fn claim(
    session: &Arc<HttpSession>,
    id: &RequestId,
    limit: usize,
    wait: std::time::Duration,
) -> Result<InFlightEntry, (StatusCode, McpError)> {
    if !lock(&session.ids).insert(id.clone()) {
        return Err((
            StatusCode::BAD_REQUEST,
            McpError::invalid_request(
                "Invalid request: a request with this id is already in flight in this session",
            ),
        ));
    }
    // From here the id is claimed; the entry gives it back however this ends.
    let mut entry = InFlightEntry {
        session: session.clone(),
        id: id.clone(),
        _slot: None,
    };
    match tokio::time::timeout(wait, session.slots.clone().acquire_owned()).await {
        Ok(Ok(slot)) => {
            entry._slot = Some(slot);
            Ok(entry)
        }
        _ => Err((
            StatusCode::TOO_MANY_REQUESTS,
            McpError::invalid_request(format!(
                "Too many requests in flight in this session (the limit is {limit}); \
                 wait for answers or cancel some"
            )),
        )),
    }
}

async fn run_request<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    session: Arc<HttpSession>,
    http: Arc<HttpRequest>,
    id: RequestId,
    method: crate::jsonrpc::Method,
    params: Option<Params>,
) -> Response {
    let limit = shared.server.server.options.max_in_flight.max(1);
    let entry = match claim(&session, &id, limit, shared.config.request_timeout).await {
        Ok(entry) => entry,
        Err((status, e)) => return error(status, Some(&id), e),
    };
    let server = shared.server.clone();
    let request_id = id.clone();
    let tracked = session.clone();
    let store = Some(session.store.clone());
    let accept = http.headers().get(axum::http::header::ACCEPT);
    let answering = Answering::new(&shared.config, accept);
    let started = response::start(answering, Some(id.clone()), store, move |sink| async move {
        // Given back however the request ends (the future is dropped when it is aborted).
        let _entry = entry;
        let origin = Origin {
            server: &server,
            session: Some(&tracked.session),
            sink: &sink,
            surface_internal: server.server.options.surface_internal_errors,
            http: Some(http),
        };
        dispatch::handle_request(origin, request_id, method, params.unwrap_or_default()).await
    });
    session
        .in_flight
        .insert(id.clone(), started.abort_handle(), ());
    started.respond().await
}

async fn initialize<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    http: &Arc<HttpRequest>,
    message: super::Inbound,
) -> Response {
    let Decoded::Request { id, method, params } = message else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let client = client_of(http);
    let mut reservation = match reserve(shared, client.clone()) {
        Ok(reservation) => reservation,
        Err(e) => return error(StatusCode::SERVICE_UNAVAILABLE, Some(&id), e),
    };
    let session_id = match random_id() {
        Ok(sid) => sid,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, Some(&id), e),
    };
    let owner = http.principal().map(|p| p.identity());
    let http_session = shared.new_session(&session_id, owner, client, now_ms());
    let session = http_session.session.clone();
    // The handshake has no stream of its own: what its handler sends is dropped.
    let sink = crate::lowlevel::Sink::discard();
    let origin = Origin {
        server: &shared.server,
        session: Some(&session),
        sink: &sink,
        surface_internal: shared.server.server.options.surface_internal_errors,
        http: Some(http.clone()),
    };
    let handshake =
        dispatch::handle_request(origin, id.clone(), method, params.unwrap_or_default());
    let Ok(answer) = tokio::time::timeout(shared.config.request_timeout, handshake).await else {
        let e = McpError::internal("initialize ran past the request timeout");
        return error(StatusCode::OK, Some(&id), e);
    };
    if !session.is_initialized() {
        return response::json(StatusCode::OK, answer.line);
    }
    // Shared before the client learns the id, so any replica can serve its next request.
    if let Err(e) = shared.save(&http_session).await {
        return store_failed(e);
    }
    lock(&shared.sessions)
        .map
        .insert(session_id.clone(), http_session);
    reservation.kept = true;
    drop(reservation);
    if session.begin() {
        run_hooks(&shared.server.server.on_connect, &session);
    }
    let mut response = response::json(StatusCode::OK, answer.line);
    if let Ok(value) = HeaderValue::from_str(&session_id) {
        response.headers_mut().insert("mcp-session-id", value);
    }
    response
}

pub(crate) async fn delete<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    id: &str,
    http: &HttpRequest,
) -> Response {
    match shared.get(id, http).await {
        Ok(Some(_)) => {}
        Ok(None) => return StatusCode::NOT_FOUND.into_response(),
        Err(e) => return store_failed(e),
    }
    match shared.delete(id).await {
        Ok(true) => StatusCode::OK.into_response(),
        Ok(false) => StatusCode::NOT_FOUND.into_response(),
        Err(e) => store_failed(e),
    }
}
