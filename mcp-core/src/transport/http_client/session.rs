//! The 2025 session over HTTP: the standalone `GET` stream, resuming a broken stream with
//! `Last-Event-ID`, a new `initialize` when the server forgot the session, `DELETE` at the end.

use std::time::Duration;

use axum::http::header::ACCEPT;
use axum::http::{HeaderValue, Method, Response, StatusCode};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming as Body;

use super::exchange::{http_error, read_body, retry_delay, Conn};
use super::sse::SseParser;
use super::{LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID};
use crate::error::McpError;

impl Conn {
    /// `GET` + `Last-Event-ID`: the rest of a 2025 stream.
    pub(super) async fn resume(&self, last_id: &str) -> Result<Response<Body>, McpError> {
        let request = self
            .get_stream()
            .header(LAST_EVENT_ID, last_id)
            .body(Full::new(Bytes::new()))
            .map_err(|e| McpError::internal(format!("invalid resumption request: {e}")))?;
        let response = self.send(request).await?;
        if !response.status().is_success() {
            let status = response.status();
            let body = read_body(response).await.unwrap_or_default();
            return Err(http_error(status, &body, &self.url));
        }
        Ok(response)
    }

    pub(super) fn get_stream(&self) -> axum::http::request::Builder {
        let (session, version) = {
            let st = self.session();
            (st.id.clone(), st.version.clone())
        };
        let mut builder = self
            .request(Method::GET)
            .header(ACCEPT, "text/event-stream");
        if let Some(session) = session {
            builder = builder.header(SESSION_ID, session);
        }
        if let Some(version) = version {
            builder = builder.header(PROTOCOL_VERSION, version);
        }
        builder
    }

    /// The standalone `GET` stream of a 2025 session: the server's notifications and requests,
    /// reopened (from the last event id) when it ends, until the server refuses it.
    pub(super) async fn standalone(&self, ready: tokio::sync::oneshot::Sender<()>) {
        let mut ready = Some(ready);
        let mut parser = SseParser::default();
        let mut failures = 0;
        loop {
            let mut builder = self.get_stream();
            if let Some(last) = &parser.last_id {
                builder = builder.header(LAST_EVENT_ID, last.as_str());
            }
            let Ok(request) = builder.body(Full::new(Bytes::new())) else {
                return;
            };
            let response = self.send(request).await;
            if let Some(ready) = ready.take() {
                let _ = ready.send(());
            }
            match response {
                Ok(response) if response.status().is_success() => {
                    failures = 0;
                    self.pump(response.into_body(), &mut parser, None).await;
                }
                Ok(response) if response.status() == StatusCode::METHOD_NOT_ALLOWED => return,
                Ok(response) => {
                    tracing::debug!(status = %response.status(), "standalone stream refused");
                    failures += 1;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "standalone stream failed");
                    failures += 1;
                }
            }
            if failures >= 3 || self.incoming.is_closed() {
                return;
            }
            tokio::time::sleep(retry_delay(&parser)).await;
        }
    }

    /// Replaces an expired 2025 session: replays `initialize` and `notifications/initialized`.
    pub(super) async fn reinitialize(&self, expired: Option<HeaderValue>) -> Result<(), McpError> {
        let _one_at_a_time = self.reinit.lock().await;
        let (current, initialize, initialized) = {
            let st = self.session();
            (st.id.clone(), st.initialize.clone(), st.initialized.clone())
        };
        if current != expired {
            return Ok(()); // another request already opened a new session
        }
        let Some(initialize) = initialize else {
            return Err(McpError::internal(
                "the session expired and no initialize to replay",
            ));
        };
        self.session().id = None;
        let request = self
            .json_post()
            .body(Full::new(Bytes::from(initialize)))
            .map_err(|e| McpError::internal(format!("invalid initialize request: {e}")))?;
        let response = self.send(request).await?;
        let status = response.status();
        if !status.is_success() {
            let body = read_body(response).await.unwrap_or_default();
            return Err(http_error(status, &body, &self.url));
        }
        let new_id = response.headers().get(SESSION_ID).cloned();
        // The answer is the server's business; the client already knows the session's terms.
        drop(response);
        self.session().id = new_id.clone();
        tracing::info!("the server ended the session; a new one was opened");
        if let Some(initialized) = initialized {
            let mut builder = self.json_post();
            if let Some(id) = &new_id {
                builder = builder.header(SESSION_ID, id);
            }
            if let Some(version) = self.session().version.clone() {
                builder = builder.header(PROTOCOL_VERSION, version);
            }
            if let Ok(request) = builder.body(Full::new(Bytes::from(initialized))) {
                let _ = self.send(request).await;
            }
        }
        Ok(())
    }

    /// `DELETE` of the 2025 session, if there is one (a server may answer 405).
    pub(super) async fn end_session(&self) {
        let (session, version) = {
            let st = self.session();
            (st.id.clone(), st.version.clone())
        };
        let Some(session) = session else { return };
        let mut builder = self.request(Method::DELETE).header(SESSION_ID, session);
        if let Some(version) = version {
            builder = builder.header(PROTOCOL_VERSION, version);
        }
        if let Ok(request) = builder.body(Full::new(Bytes::new())) {
            let _ = tokio::time::timeout(Duration::from_secs(2), self.send_as_is(request)).await;
        }
    }
}
