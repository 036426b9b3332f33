//! One request over HTTP: the POST with its era's headers, the answer as JSON or as an event
//! stream (resumed on 2025 when it breaks), HTTP errors turned into the request's error.

use std::sync::Mutex;
use std::time::Duration;

use axum::http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper_util::client::legacy::Client as Hyper;
use serde::de::IgnoredAny;
use serde::Deserialize;
use tokio::sync::mpsc;

use super::sse::SseParser;
use super::{DEFAULT_RETRY, MAX_BODY, MAX_RETRY, PROTOCOL_VERSION, SESSION_ID};
use crate::auth::{AuthProvider, BearerChallenge, Refusal};
use crate::era::Era;
use crate::error::ErrorObject;
use crate::error::McpError;
use crate::fetch::Connector;
use crate::jsonrpc::RequestId;
use crate::transport::wire::{encode_header_value, Incoming, Outgoing};

#[derive(Default)]
pub(super) struct Session {
    /// `Mcp-Session-Id` of the 2025 session, once `initialize` was answered.
    pub(super) id: Option<HeaderValue>,
    /// The body of the `initialize` request, replayed when the session expires.
    pub(super) initialize: Option<String>,
    /// The body of `notifications/initialized`, replayed after it.
    pub(super) initialized: Option<String>,
    /// The protocol version header of the session's later requests.
    pub(super) version: Option<HeaderValue>,
}

pub(super) struct Conn {
    pub(super) url: Uri,
    pub(super) headers: Vec<(HeaderName, HeaderValue)>,
    pub(super) max_resumptions: u32,
    pub(super) hyper: Hyper<Connector, Full<Bytes>>,
    pub(super) incoming: mpsc::Sender<Incoming>,
    pub(super) session: Mutex<Session>,
    /// Held while a new `initialize` replaces an expired session.
    pub(super) reinit: tokio::sync::Mutex<()>,
    /// Credentials for every request, renewed on 401/403.
    pub(super) auth: Option<std::sync::Arc<dyn AuthProvider>>,
    /// One permit per request open at once (`max_concurrent_requests`). Responses and
    /// notifications take none: a server waiting on our answer to its own request must get it
    /// even when every permit is held by a request that waits for that answer.
    pub(super) requests: tokio::sync::Semaphore,
}

/// How many times one request is resent after its credentials were refused.
const MAX_REFUSALS: u32 = 3;

/// Enough of a JSON-RPC message to tell a response to our request from the rest.
#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

/// An error body (`{"error": {...}}`), possibly without an id.
#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorObject,
}

impl Conn {
    pub(super) fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A POST of one JSON-RPC message, accepting a JSON or an event-stream answer.
    pub(super) fn json_post(&self) -> axum::http::request::Builder {
        self.request(Method::POST)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
    }

    pub(super) fn request(&self, method: Method) -> axum::http::request::Builder {
        let mut builder = Request::builder().method(method).uri(self.url.clone());
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        builder
    }

    /// A POST of `message` with the headers of its era.
    pub(super) fn post(
        &self,
        message: &Outgoing,
        session: Option<&HeaderValue>,
    ) -> Request<Full<Bytes>> {
        let mut builder = self.json_post();
        if let Some(version) = &message.protocol_version {
            builder = builder.header(PROTOCOL_VERSION, &**version);
            if message.era == Era::Legacy {
                let mut st = self.session();
                if st.version.is_none() {
                    st.version = HeaderValue::try_from(&**version).ok();
                }
            }
        }
        if message.era == Era::Modern {
            if let Some(method) = &message.method {
                builder = builder.header("mcp-method", &**method);
            }
            if let Some(name) = &message.name {
                builder = builder.header("mcp-name", encode_header_value(name));
            }
        } else if let Some(session) = session {
            builder = builder.header(SESSION_ID, session);
        }
        for (name, value) in &message.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
            .body(Full::new(Bytes::from(message.body.clone())))
            .unwrap_or_else(|_| Request::new(Full::new(Bytes::new())))
    }

    /// Sends `request` with the auth provider's credentials; a 401 or 403 goes to the provider,
    /// which may renew them (at most 3 times per request) before the answer is returned.
    pub(super) async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Body>, McpError> {
        let Some(auth) = &self.auth else {
            return self.send_once(request).await;
        };
        let endpoint = self.url.to_string();
        let (parts, body) = request.into_parts();
        let mut refusals = 0;
        loop {
            let mut request = Request::new(body.clone());
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.headers_mut() = parts.headers.clone();
            let sent = auth.authorization(&endpoint).await?;
            if let Some(value) = sent.clone() {
                let value = HeaderValue::try_from(value).map_err(|_| {
                    McpError::internal(
                        "the auth provider gave an Authorization value HTTP does not allow",
                    )
                })?;
                request.headers_mut().insert(AUTHORIZATION, value);
            }
            let response = self.send_once(request).await?;
            let status = response.status();
            let refused = status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
            if !refused || refusals >= MAX_REFUSALS {
                return Ok(response);
            }
            refusals += 1;
            let refusal = Refusal {
                status: status.as_u16(),
                challenge: response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .and_then(BearerChallenge::parse),
                endpoint: endpoint.clone(),
                sent,
            };
            if !auth.refused(&refusal).await? {
                return Ok(response);
            }
        }
    }

    /// Sends `request` with the current credentials but never asks for new ones: for the
    /// `DELETE` that ends a session, which must not start a login on its way out.
    pub(super) async fn send_as_is(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Body>, McpError> {
        let mut request = request;
        if let Some(auth) = &self.auth {
            let endpoint = self.url.to_string();
            if let Some(value) = auth.authorization(&endpoint).await? {
                if let Ok(value) = HeaderValue::try_from(value) {
                    request.headers_mut().insert(AUTHORIZATION, value);
                }
            }
        }
        self.send_once(request).await
    }

    async fn send_once(&self, request: Request<Full<Bytes>>) -> Result<Response<Body>, McpError> {
        self.hyper.request(request).await.map_err(|e| {
            let text = crate::fetch::error_chain(&e);
            McpError::internal(format!("could not reach {}: {text}", self.url))
        })
    }

    /// Sends a notification or a response; logs what the server refuses.
    pub(super) async fn post_one_way(&self, message: &Outgoing) {
        let session = self.session().id.clone();
        let request = self.post(message, session.as_ref());
        match self.send(request).await {
            Ok(response) if response.status().is_success() => {}
            Ok(response) => tracing::warn!(
                status = %response.status(),
                method = message.method.as_deref().unwrap_or("response"),
                "the server refused a message"
            ),
            Err(e) => tracing::warn!(error = %e, "could not send a message"),
        }
    }

    /// Sends request `id` and delivers everything that comes back for it.
    pub(super) async fn exchange(&self, message: &Outgoing, id: &RequestId) {
        // Never closed, so the permit always comes; held until the answer has been read.
        let _permit = self.requests.acquire().await.ok();
        if let Err(error) = self.exchange_inner(message, id).await {
            let _ = self
                .incoming
                .send(Incoming::Failed {
                    id: id.clone(),
                    error,
                })
                .await;
        }
    }

    pub(super) async fn exchange_inner(
        &self,
        message: &Outgoing,
        id: &RequestId,
    ) -> Result<(), McpError> {
        let is_initialize = message.method.as_deref() == Some("initialize");
        let mut retried = false;
        loop {
            let session = self.session().id.clone();
            let request = self.post(message, session.as_ref());
            let response = self.send(request).await?;
            let status = response.status();
            if status == StatusCode::NOT_FOUND
                && message.era == Era::Legacy
                && session.is_some()
                && !is_initialize
                && !retried
            {
                // The server ended the session: open a new one and try once more.
                drop(response);
                retried = true;
                self.reinitialize(session).await?;
                continue;
            }
            if is_initialize && status.is_success() {
                let mut st = self.session();
                st.id = response.headers().get(SESSION_ID).cloned();
            }
            return self.deliver(response, message, id).await;
        }
    }

    /// Reads a response to request `id`: JSON, an event stream (resumed on 2025 when it
    /// breaks), or an HTTP error.
    pub(super) async fn deliver(
        &self,
        response: Response<Body>,
        message: &Outgoing,
        id: &RequestId,
    ) -> Result<(), McpError> {
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !status.is_success() {
            let body = read_body(response).await.unwrap_or_default();
            return Err(http_error(status, &body, &self.url));
        }
        if content_type.starts_with("text/event-stream") {
            return self.read_answer_stream(response, message, id).await;
        }
        if status == StatusCode::ACCEPTED {
            return Err(McpError::internal(format!(
                "{} accepted the request without answering it (HTTP 202)",
                self.url
            )));
        }
        let body = read_body(response).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(McpError::internal(format!(
                "{} answered HTTP {status} with an empty body",
                self.url
            )));
        }
        // Decoded once, by the reader; one that is not JSON-RPC fails this request only.
        let answer = Incoming::Answer {
            id: id.clone(),
            message: body.to_vec(),
        };
        let _ = self.incoming.send(answer).await;
        Ok(())
    }

    pub(super) async fn forward(&self, message: Vec<u8>) -> bool {
        self.incoming.send(Incoming::Message(message)).await.is_ok()
    }

    /// Forwards the events of a response stream until the answer to `id` arrives. A 2025 stream
    /// that ends first is resumed from its last event id.
    pub(super) async fn read_answer_stream(
        &self,
        response: Response<Body>,
        message: &Outgoing,
        id: &RequestId,
    ) -> Result<(), McpError> {
        let mut parser = SseParser::default();
        let mut response = response;
        let mut resumptions = 0;
        loop {
            if self.pump(response.into_body(), &mut parser, Some(id)).await {
                return Ok(());
            }
            let Some(last_id) = parser.last_id.clone() else {
                return Err(McpError::internal(format!(
                    "the response stream of request {id} ended before its answer"
                )));
            };
            if message.era == Era::Modern || resumptions >= self.max_resumptions {
                return Err(McpError::internal(format!(
                    "the response stream of request {id} ended before its answer \
                     (resumed {resumptions} times)"
                )));
            }
            resumptions += 1;
            tokio::time::sleep(retry_delay(&parser)).await;
            response = self.resume(&last_id).await?;
        }
    }

    /// Forwards the events of `body`; true once the answer to `answer_to` went through.
    pub(super) async fn pump(
        &self,
        mut body: Body,
        parser: &mut SseParser,
        answer_to: Option<&RequestId>,
    ) -> bool {
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { return false };
            let Ok(chunk) = frame.into_data() else {
                continue;
            };
            let events = match parser.feed(&chunk) {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!("{e}");
                    return false;
                }
            };
            for event in events {
                if event.data.trim().is_empty() {
                    continue;
                }
                let Ok(peek) = serde_json::from_str::<Peek>(&event.data) else {
                    let text: String = event.data.chars().take(200).collect();
                    tracing::warn!("an event that is not JSON-RPC was skipped: {text:?}");
                    continue;
                };
                let answered = answer_to
                    .is_some_and(|id| peek.method.is_none() && peek.id.as_ref() == Some(id));
                if !self.forward(event.data.into_bytes()).await || answered {
                    return true;
                }
            }
        }
        false
    }
}

pub(super) fn retry_delay(parser: &SseParser) -> Duration {
    parser
        .retry_ms
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_RETRY)
        .min(MAX_RETRY)
}

pub(super) async fn read_body(response: Response<Body>) -> Result<Bytes, McpError> {
    let limited = http_body_util::Limited::new(response.into_body(), MAX_BODY);
    match limited.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => Err(McpError::internal(format!(
            "could not read the answer: {e}"
        ))),
    }
}

/// The error for an HTTP error status: the JSON-RPC error in the body when there is one (its
/// code kept), else the status and the start of the body.
pub(super) fn http_error(status: StatusCode, body: &[u8], url: &Uri) -> McpError {
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        // Say what to do, not only what the server said.
        let said = serde_json::from_slice::<ErrorBody>(body)
            .map(|b| b.error.message)
            .unwrap_or_default();
        let hint = if status == StatusCode::UNAUTHORIZED {
            "the endpoint needs authorization: give the transport credentials \
             (HttpClientTransport::auth with an OAuth provider, or an Authorization header)"
        } else {
            "the credentials lack a permission this request needs"
        };
        let mut message = format!("{url} answered HTTP {status}: {hint}");
        if !said.is_empty() {
            message = format!("{message} (server: {said})");
        }
        return McpError::invalid_request(message);
    }
    if let Ok(ErrorBody { error }) = serde_json::from_slice(body) {
        return McpError::from_wire(error);
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    let text = text.trim();
    let mut message = format!("{url} answered HTTP {status}");
    if !text.is_empty() {
        message = format!("{message}: {text}");
    }
    McpError::internal(message)
}
