//! Answering one POST: plain JSON when the request produced only its result, an SSE stream when
//! it sent anything first (progress, logs, server-to-client requests). Dropping the response
//! (the client went away) cancels the request.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use super::config::HttpConfig;
use super::events::{self, EventStore};
use super::keep_alive::KeepAlive;
use crate::error::McpError;
use crate::jsonrpc;
use crate::lowlevel::dispatch::Answer;
use crate::lowlevel::{Opening, Outbound, Outbox, Sink};

/// Messages a request's handler may queue before it waits (each as large as the handler makes
/// it); what goes to the client past them is bounded in bytes ([`HttpConfig::stream_buffer_bytes`]).
const STREAM_BUFFER: usize = 8;

/// How one POST may be answered.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Answering {
    /// Longest time the request may run.
    pub(crate) timeout: Duration,
    /// The client accepts `text/event-stream`: without it the answer is JSON and the messages
    /// sent before it (progress, logs) are dropped (the server must not send SSE to it).
    pub(crate) sse: bool,
    /// Bytes of frames queued for the client.
    pub(crate) buffer_bytes: usize,
    /// A client that reads nothing for this long is given up.
    pub(crate) write_timeout: Duration,
    /// Silence after which an SSE answer gets a keep-alive comment.
    pub(crate) keep_alive: Option<Duration>,
}

impl Answering {
    /// `accept`: the request's `Accept` header.
    pub(crate) fn new(config: &HttpConfig, accept: Option<&HeaderValue>) -> Self {
        Self {
            timeout: config.request_timeout,
            sse: accepts_sse(accept),
            buffer_bytes: config.stream_buffer_bytes.max(1),
            write_timeout: config.write_timeout,
            keep_alive: config.keep_alive,
        }
    }
}

/// True unless an `Accept` header is present and takes no event stream (no header means
/// anything is acceptable, as in HTTP).
fn accepts_sse(accept: Option<&HeaderValue>) -> bool {
    super::headers::accepts(accept, &["text/event-stream", "*/*", "text/*"])
}

/// A JSON-RPC error answer with HTTP `status`.
pub(crate) fn error(
    status: StatusCode,
    id: Option<&crate::jsonrpc::RequestId>,
    e: crate::error::McpError,
) -> Response {
    json(status, crate::jsonrpc::encode_error(id, &e.to_wire(false)))
}

pub(crate) fn json(status: StatusCode, line: String) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        line,
    )
        .into_response()
}

/// The HTTP status of a final answer: 400 for the errors the 2026 transport maps to it.
fn status_of(answer: &Answer) -> StatusCode {
    match answer.error {
        Some(crate::error::codes::MISSING_REQUIRED_CLIENT_CAPABILITY) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// A final answer as a JSON response.
fn answered(answer: Answer) -> Response {
    json(status_of(&answer), answer.line)
}

/// Starts `handler` (given the request's stream) in a task of its own; [`Started::respond`]
/// then answers with JSON or SSE.
///
/// The stream is made to measure: a client that takes no event stream gets one that drops
/// what is sent (its answer is JSON); a 2025 request's (`resumable`) exists from the start, as
/// its events are stored; a 2026 request's is made only when the handler first sends something,
/// so a request that only returns its result costs no channel.
///
/// Starting is not `async`: what a request carries up to here (its message, its routed parts)
/// lives on the stack, not in the future the connection holds and moves on every request.
pub(crate) fn start<F, Fut>(
    answering: Answering,
    id: Option<jsonrpc::RequestId>,
    resumable: Option<Arc<EventStore>>,
    handler: F,
) -> Started
where
    F: FnOnce(Sink) -> Fut,
    Fut: Future<Output = Answer> + Send + 'static,
{
    let timeout = answering.timeout;
    let (sink, stream) = match (answering.sse, resumable) {
        (false, resumable) => (Sink::discard(), Stream::Dropped(resumable.is_some())),
        (true, Some(store)) => {
            let (sink, rx) = Sink::channel(STREAM_BUFFER);
            (sink, Stream::Resumable(store, rx))
        }
        (true, None) => {
            let (sink, opening) = Sink::on_demand(STREAM_BUFFER);
            (sink, Stream::OnDemand(opening))
        }
    };
    // Boxed: the task holds a pointer, not the whole handler future (copied on spawn).
    let fut = Box::pin(handler(sink));
    let handle = tokio::spawn(async move {
        match super::lazy_timeout::timeout(timeout, fut).await {
            Some(answer) => answer,
            None => {
                tracing::warn!(
                    ?timeout,
                    "request cancelled: it ran longer than the timeout"
                );
                let e =
                    McpError::internal(format!("Request timed out after {} s", timeout.as_secs()));
                Answer {
                    line: jsonrpc::encode_error(id.as_ref(), &e.to_wire(true)),
                    error: Some(e.code()),
                }
            }
        }
    });
    Started {
        handle,
        stream,
        answering,
    }
}

/// A request whose handler runs (see [`start`]).
pub(crate) struct Started {
    handle: JoinHandle<Answer>,
    stream: Stream,
    answering: Answering,
}

impl Started {
    /// Cancels the handler (for a session that tracks its requests).
    pub(crate) fn abort_handle(&self) -> tokio::task::AbortHandle {
        self.handle.abort_handle()
    }

    /// The response: JSON when the handler sent nothing before its result, else an event
    /// stream.
    pub(crate) async fn respond(self) -> Response {
        let Started {
            handle,
            stream,
            answering,
        } = self;
        match stream {
            Stream::Dropped(resumable) => {
                // A 2026 request ends with its response (dropped: the client went away); a 2025
                // one goes on.
                let _abort = (!resumable).then(|| AbortOnDrop(handle.abort_handle()));
                json_only(handle).await
            }
            Stream::Resumable(store, rx) => resumable_answer(store, rx, handle, answering).await,
            Stream::OnDemand(opening) => on_demand_answer(opening, handle, answering).await,
        }
    }
}

/// Where the messages a request's handler sends go.
enum Stream {
    /// Nowhere: the client takes no event stream (`true`: a 2025 request, which outlives its
    /// response).
    Dropped(bool),
    /// A 2025 request's resumable stream, stored as it goes.
    Resumable(Arc<EventStore>, Outbox),
    /// A 2026 request's, once the handler sends something.
    OnDemand(Opening),
}

/// A 2026 answer: JSON when the handler sent nothing before its result, else an event stream
/// (ended by the result) from the first message on. Dropped, it cancels the request.
async fn on_demand_answer(
    opening: Opening,
    mut handle: JoinHandle<Answer>,
    answering: Answering,
) -> Response {
    let abort = AbortOnDrop(handle.abort_handle());
    let stream = |first: String, rx, handle, final_line| SseStream {
        pending_first: Some(first),
        rx,
        handle,
        final_line,
        _abort: abort,
        done: false,
    };
    // The handler's first message, or its answer if that comes first (then whatever it sent
    // just before, if anything, still goes first).
    let (mut rx, answer) = tokio::select! {
        biased;
        rx = opening.opened() => (rx, None),
        answer = &mut handle => match opening.take() {
            Some(rx) => (rx, Some(answer)),
            None => return finished(answer),
        },
    };
    drop(opening);
    let answer = match answer {
        Some(answer) => answer,
        None => tokio::select! {
            biased;
            first = rx.recv() => match first.and_then(Outbound::into_message) {
                Some(first) => {
                    return sse_body(stream(first, rx, Some(handle), None), answering.keep_alive)
                }
                None => (&mut handle).await,
            },
            answer = &mut handle => answer,
        },
    };
    match (answer, next_message(&mut rx)) {
        (Ok(line), Some(first)) => sse_body(
            stream(first, rx, None, Some(line.line)),
            answering.keep_alive,
        ),
        (answer, _) => finished(answer),
    }
}

/// A request's end as its whole response: its answer as JSON, or [`ended`] without one.
fn finished(answer: Result<Answer, tokio::task::JoinError>) -> Response {
    match answer {
        Ok(line) => answered(line),
        Err(e) => ended(&e),
    }
}

/// The answer as JSON for a client that takes no event stream (what the handler sent before
/// it was dropped): the final line is the body.
async fn json_only(handle: JoinHandle<Answer>) -> Response {
    match handle.await {
        Ok(line) => answered(line),
        // Cancelled: a cancelled request is never answered.
        Err(e) if e.is_cancelled() => StatusCode::ACCEPTED.into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// The next queued message (a `close_stream` skipped).
fn next_message(rx: &mut Outbox) -> Option<String> {
    while let Ok(item) = rx.try_recv() {
        if let Outbound::Message(line) = item {
            return Some(line);
        }
    }
    None
}

/// 2025: like the stateless answer, but an SSE stream is resumable (event ids, a priming event
/// with `retry`, every event kept in the session's store) and a client that goes away does not
/// cancel the request: its answer waits in the store for a `GET` with `Last-Event-ID`.
async fn resumable_answer(
    store: Arc<EventStore>,
    mut rx: Outbox,
    mut handle: JoinHandle<Answer>,
    answering: Answering,
) -> Response {
    let first = tokio::select! {
        biased;
        first = rx.recv() => first,
        line = &mut handle => match line {
            Ok(line) => match rx.try_recv() {
                Ok(first) => {
                    return resumable_sse(store, first, rx, None, Some(line.line), answering);
                }
                Err(_) => return answered(line),
            },
            Err(e) => return ended(&e),
        },
    };
    match first {
        Some(first) => resumable_sse(store, first, rx, Some(handle), None, answering),
        None => finished(handle.await),
    }
}

/// The sending end of a response body bounded in bytes: a frame waits for room (at most the
/// write timeout; then the client is taken for gone and the body ends).
struct BodySender {
    tx: mpsc::UnboundedSender<(Bytes, OwnedSemaphorePermit)>,
    room: Arc<Semaphore>,
    budget: usize,
    write_timeout: Duration,
}

impl BodySender {
    /// False when the body is over (the client left or stopped reading).
    async fn send(&self, frame: Bytes) -> bool {
        let want = frame.len().clamp(1, self.budget);
        let want = u32::try_from(want).unwrap_or(u32::MAX);
        let permit = tokio::time::timeout(
            self.write_timeout,
            self.room.clone().acquire_many_owned(want),
        )
        .await;
        match permit {
            Ok(Ok(permit)) => self.tx.send((frame, permit)).is_ok(),
            Ok(Err(_)) => false,
            Err(_) => {
                tracing::debug!("the client stopped reading a response: its body ends");
                false
            }
        }
    }
}

/// A response body holding at most `budget` bytes not yet taken by the server.
fn bounded_body(answering: Answering) -> (BodySender, BoundedBody) {
    let budget = answering
        .buffer_bytes
        .clamp(1, u32::MAX as usize)
        .min(Semaphore::MAX_PERMITS);
    let (tx, rx) = mpsc::unbounded_channel();
    let sender = BodySender {
        tx,
        room: Arc::new(Semaphore::new(budget)),
        budget,
        write_timeout: answering.write_timeout,
    };
    (sender, BoundedBody(rx))
}

/// The receiving end: each frame's room is given back when the server takes it.
pub(crate) struct BoundedBody(mpsc::UnboundedReceiver<(Bytes, OwnedSemaphorePermit)>);

impl futures_core::Stream for BoundedBody {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0
            .poll_recv(cx)
            .map(|frame| frame.map(|(frame, _room)| Ok(frame)))
    }
}

fn resumable_sse(
    store: Arc<EventStore>,
    first: Outbound,
    mut rx: Outbox,
    mut handle: Option<JoinHandle<Answer>>,
    mut final_line: Option<String>,
    answering: Answering,
) -> Response {
    let stream = store.open_stream();
    let (body, body_rx) = bounded_body(answering);
    tokio::spawn(async move {
        let mut seq = 0;
        let mut emit = |line: String| {
            seq += 1;
            store.push(stream, seq, &line)
        };
        // A closed body only means the client left, stopped reading, or the handler closed
        // the stream: keep storing for its reconnection.
        let mut body = Some(body);
        let send = |body: &mut Option<BodySender>, frame: Bytes| {
            let live = body.take();
            async move {
                match live {
                    Some(live) if live.send(frame).await => Some(live),
                    _ => None,
                }
            }
        };
        body = send(&mut body, events::priming(stream)).await;
        let mut pending = vec![first];
        loop {
            for item in pending.drain(..) {
                match item {
                    Outbound::Close => body = None,
                    Outbound::Message(line) => {
                        let frame = emit(line);
                        body = send(&mut body, frame).await;
                    }
                }
            }
            let Some(task) = handle.as_mut() else { break };
            tokio::select! {
                biased;
                Some(line) = rx.recv() => pending.push(line),
                result = task => {
                    final_line = result.ok().map(|answer| answer.line);
                    handle = None;
                }
            }
        }
        while let Some(line) = next_message(&mut rx) {
            let frame = emit(line);
            body = send(&mut body, frame).await;
        }
        if let Some(line) = final_line {
            let frame = emit(line);
            drop(send(&mut body, frame).await);
        }
        store.finish(stream);
    });
    sse_body(body_rx, answering.keep_alive)
}

/// An SSE body fed by a channel of ready frames.
pub(crate) struct ChannelBody(pub(crate) mpsc::Receiver<Bytes>);

impl futures_core::Stream for ChannelBody {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|frame| frame.map(Ok))
    }
}

/// A `text/event-stream` response with `body`, and a keep-alive comment after every
/// `keep_alive` of silence.
pub(crate) fn sse_body<B>(body: B, keep_alive: Option<Duration>) -> Response
where
    B: futures_core::Stream<Item = Result<Bytes, std::io::Error>> + Send + Unpin + 'static,
{
    let body = KeepAlive::new(body, keep_alive);
    (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                header::HeaderName::from_static("x-accel-buffering"),
                HeaderValue::from_static("no"),
            ),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// A request that ended without an answer: a cancelled one (`notifications/cancelled`) gets an
/// event stream that ends with no message, since a cancelled request is never answered.
fn ended(e: &tokio::task::JoinError) -> Response {
    if e.is_cancelled() {
        let (_, rx) = mpsc::channel::<Bytes>(1);
        sse_body(ChannelBody(rx), None)
    } else {
        StatusCode::INTERNAL_SERVER_ERROR.into_response()
    }
}

/// Aborts the request's task when the response is dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `data: <message>` events: the notifications, then the final answer. The handler's queue
/// ([`STREAM_BUFFER`] messages) is the only buffer: nothing is read from it until the server
/// takes the previous frame.
struct SseStream {
    pending_first: Option<String>,
    rx: Outbox,
    handle: Option<JoinHandle<Answer>>,
    final_line: Option<String>,
    _abort: AbortOnDrop,
    done: bool,
}

fn event(line: &str) -> Bytes {
    Bytes::from(format!("data: {line}\n\n"))
}

impl futures_core::Stream for SseStream {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(first) = self.pending_first.take() {
            return Poll::Ready(Some(Ok(event(&first))));
        }
        while let Poll::Ready(Some(item)) = self.rx.poll_recv(cx) {
            if let Outbound::Message(line) = item {
                return Poll::Ready(Some(Ok(event(&line))));
            }
        }
        if let Some(handle) = self.handle.as_mut() {
            match Pin::new(handle).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => {
                    self.handle = None;
                    self.final_line = result.ok().map(|answer| answer.line);
                }
            }
        }
        // The request is over: what is still queued, then its answer.
        if let Some(line) = next_message(&mut self.rx) {
            return Poll::Ready(Some(Ok(event(&line))));
        }
        self.done = true;
        Poll::Ready(self.final_line.take().map(|line| Ok(event(&line))))
    }
}
