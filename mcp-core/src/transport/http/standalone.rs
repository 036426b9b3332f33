//! The standalone `GET` stream of a 2025-11-25 session, and `Last-Event-ID` replays of any of
//! its streams.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use super::events::{self, Resume};
use super::headers;
use super::response::{self, error};
use super::sessions::{lock, HttpSession, Shared};
use super::store::{self, Replay};
use crate::error::McpError;
use crate::lowlevel::HttpRequest;

pub(crate) async fn get_stream<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    id: &str,
    http: &HttpRequest,
) -> Response {
    let headers = http.headers();
    let session = match shared.get(id, http).await {
        Ok(Some(session)) => session,
        Ok(None) => return StatusCode::NOT_FOUND.into_response(),
        Err(e) => return super::legacy::store_failed(e),
    };
    let accepts = headers::get(headers, "accept").is_some_and(|a| a.contains("text/event-stream"));
    if !accepts {
        return StatusCode::NOT_ACCEPTABLE.into_response();
    }
    *lock(&session.last_seen) = Instant::now();
    if let Some(last) = headers.get("last-event-id") {
        // Resumption: the rest of the stream that event belonged to.
        let parsed = last.to_str().ok().and_then(events::parse_id);
        let Some((stream, seq)) = parsed else {
            return error(
                StatusCode::BAD_REQUEST,
                None,
                McpError::invalid_request(
                    "Bad Request: Last-Event-ID is not an event id of this server",
                ),
            );
        };
        let mut resume = session.store.resume(stream, seq);
        if resume == Resume::Unknown && stream != 0 {
            if let Some(events) = &shared.config.event_store {
                // A stream another replica wrote: replayed from the shared event store.
                match store::first_read(events.as_ref(), id, stream, seq).await {
                    Ok(Replay::Unknown) => {}
                    Ok(Replay::Gone) => resume = Resume::Gone,
                    Ok(first) => {
                        let (out, body) = mpsc::channel(16);
                        let timeout = shared.config.request_timeout;
                        let replay = store::replay(events.clone(), id.to_owned(), stream, seq);
                        tokio::spawn(replay.run(first, out, timeout));
                        return response::sse_body(
                            response::ChannelBody(body),
                            shared.config.keep_alive,
                        );
                    }
                    Err(e) => return super::legacy::store_failed(e),
                }
            }
        }
        match resume {
            Resume::Ready => {}
            // 400, not 404: a 404 tells a 2025 client its session is gone.
            Resume::Unknown => {
                return error(
                    StatusCode::BAD_REQUEST,
                    None,
                    McpError::invalid_request(
                        "Bad Request: Last-Event-ID names no stream of this session",
                    ),
                )
            }
            Resume::Gone => {
                return error(
                    StatusCode::GONE,
                    None,
                    McpError::invalid_request(format!(
                        "Gone: events after {stream}-{seq} are no longer kept (the session's \
                         event store is bounded); messages of that stream were lost"
                    )),
                )
            }
        }
        let (out, body) = mpsc::channel(16);
        let store = session.store.clone();
        let timeout = shared.config.request_timeout;
        tokio::spawn(async move { store.replay(stream, seq, out, timeout).await });
        return response::sse_body(response::ChannelBody(body), shared.config.keep_alive);
    }
    let Some(rx) = lock(&session.standalone).take() else {
        return StatusCode::CONFLICT.into_response();
    };
    let refresher = spawn_refresh(shared, &session);
    let stream = StandaloneStream {
        rx: Some(rx),
        session,
        primed: false,
        refresher,
    };
    response::sse_body(stream, shared.config.keep_alive)
}

/// With a session store, refreshes `session` from it every
/// [`session_refresh`](super::HttpConfig::session_refresh) while its standalone stream is open
/// (the stream aborts the task when it ends), so the stream follows what other replicas
/// changed; a session the store no longer has is ended, and the task with it.
fn spawn_refresh<S: Send + Sync + 'static>(
    shared: &Arc<Shared<S>>,
    session: &Arc<HttpSession>,
) -> Option<tokio::task::AbortHandle> {
    shared.config.session_store.as_ref()?;
    let every = shared.config.session_refresh.max(Duration::from_millis(10));
    let (shared, session) = (Arc::downgrade(shared), Arc::downgrade(session));
    let task = tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let (Some(shared), Some(session)) = (shared.upgrade(), session.upgrade()) else {
                break;
            };
            if session.session.is_closed() {
                break;
            }
            match shared.reload(&session).await {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => tracing::warn!(
                    error = %e,
                    session = session.session.id(),
                    "the session store could not be read to refresh an open GET stream's session"
                ),
            }
        }
    });
    Some(task.abort_handle())
}

/// The session's standalone stream: a priming event, then every session-level message, each
/// with an id kept in the event store.
struct StandaloneStream {
    rx: Option<crate::lowlevel::Outbox>,
    session: Arc<HttpSession>,
    primed: bool,
    /// The task refreshing the session from the store while the stream is open.
    refresher: Option<tokio::task::AbortHandle>,
}

impl Drop for StandaloneStream {
    /// The client went away: the next GET gets the stream (and what queued meanwhile).
    fn drop(&mut self) {
        if let Some(task) = self.refresher.take() {
            task.abort();
        }
        if let Some(rx) = self.rx.take() {
            if !self.session.session.is_closed() {
                *lock(&self.session.standalone) = Some(rx);
                *lock(&self.session.last_seen) = Instant::now();
            }
        }
    }
}

impl futures_core::Stream for StandaloneStream {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        if !self.primed {
            self.primed = true;
            return std::task::Poll::Ready(Some(Ok(events::priming(0))));
        }
        let Some(rx) = self.rx.as_mut() else {
            return std::task::Poll::Ready(None);
        };
        match rx.poll_recv(cx) {
            std::task::Poll::Pending => std::task::Poll::Pending,
            // Its sender is gone.
            std::task::Poll::Ready(None) => std::task::Poll::Ready(None),
            // The session ended.
            std::task::Poll::Ready(Some(crate::lowlevel::Outbound::Close)) => {
                self.rx = None;
                std::task::Poll::Ready(None)
            }
            std::task::Poll::Ready(Some(crate::lowlevel::Outbound::Message(line))) => {
                let seq = self
                    .session
                    .standalone_seq
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    + 1;
                std::task::Poll::Ready(Some(Ok(self.session.store.push(0, seq, &line))))
            }
        }
    }
}
