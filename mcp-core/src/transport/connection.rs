//! One connection over a byte stream (stdio, a socket, an in-memory pipe): reads
//! newline-delimited messages, runs requests concurrently under a bound, writes answers as they
//! finish.
//!
//! Every resource a peer can make the connection hold is bounded: requests running
//! ([`ServerOptions::max_in_flight`]), bytes queued for a peer that does not read
//! ([`ServerOptions::max_outbound_bytes`]: reading stops until the peer catches up), a write that
//! makes no progress ([`ServerOptions::write_timeout`]: the connection ends), and the wait for
//! running requests after the input ended ([`ServerOptions::shutdown_grace`]: they are
//! cancelled). A peer that closed its reading end (a broken pipe) ends the connection at the
//! first failed write; the requests still running are cancelled.
//!
//! [`ServerOptions::max_in_flight`]: crate::lowlevel::ServerOptions::max_in_flight
//! [`ServerOptions::max_outbound_bytes`]: crate::lowlevel::ServerOptions::max_outbound_bytes
//! [`ServerOptions::write_timeout`]: crate::lowlevel::ServerOptions::write_timeout
//! [`ServerOptions::shutdown_grace`]: crate::lowlevel::ServerOptions::shutdown_grace

use std::sync::{Arc, Weak};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{oneshot, watch, OwnedSemaphorePermit, Semaphore};

use crate::error::McpError;
use crate::jsonrpc::{self, Borrowed, RequestId};
use crate::lines::{Frame, LineReader};
use crate::lowlevel::dispatch::{self, run_close_hooks, run_hooks, Origin};
use crate::lowlevel::RunningServer;
use crate::lowlevel::{Params, Session, Unwritten};
use crate::peer::RunningRequests;
use crate::transport::line_writer::{write_lines, InPlace, Running, Stream, WriteLimits};
use crate::types::CancelledNotificationParams;

/// Messages handed to the writer that it has not yet taken into its byte-bounded queue. The
/// writer takes them at once while the queue is under
/// [`ServerOptions::max_outbound_bytes`](crate::lowlevel::ServerOptions::max_outbound_bytes);
/// past it, this channel fills and senders (handlers) wait.
const OUTBOUND_CAPACITY: usize = 64;

/// How a connection is labelled and configured.
pub(crate) struct ConnectionConfig {
    pub(crate) kind: &'static str,
    pub(crate) surface_internal: bool,
}

/// Serves one newline-delimited JSON-RPC connection until `reader` ends, then waits (at most
/// [`ServerOptions::shutdown_grace`](crate::lowlevel::ServerOptions::shutdown_grace)) for the
/// requests still running, flushes their answers and returns. Ends early, with an error, when a
/// write to `writer` fails or makes no progress for
/// [`ServerOptions::write_timeout`](crate::lowlevel::ServerOptions::write_timeout); the requests
/// still running are then cancelled. The server's lifespan is not touched (the caller started it
/// and stops it).
pub async fn serve_connection<S, R, W>(
    server: Arc<RunningServer<S>>,
    reader: R,
    writer: W,
) -> std::io::Result<()>
where
    S: Send + Sync + 'static,
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let config = ConnectionConfig {
        kind: "conn",
        surface_internal: server.server.options.surface_internal_errors,
    };
    serve_lines(server, reader, writer, config).await
}

struct Conn<S> {
    server: Arc<RunningServer<S>>,
    session: Session,
    sink: crate::lowlevel::Sink,
    /// The requests running, tagged `true` when long-lived (`subscriptions/listen`).
    in_flight: RunningRequests<bool>,
    surface_internal: bool,
    /// `true` while the writer's queue is full: answers wait before they are sent.
    room: watch::Receiver<bool>,
    /// The stream, for an answer written in place when nothing waits before it. The writer
    /// task owns it: when the task ends, the stream is closed, whoever still holds the
    /// connection (a notification's handler that never returns).
    in_place: Weak<dyn InPlace>,
    /// How many requests and notifications run.
    running: Running,
}

/// How the reading half of a connection ended.
enum Ended {
    /// End of input (or a read error): what waits for a slot, and the error.
    Input {
        parked: Option<Work>,
        error: Option<std::io::Error>,
    },
    /// The writer failed: the peer closed its end, or read nothing for the write timeout.
    Output(std::io::Error),
}

pub(crate) async fn serve_lines<S, R, W>(
    server: Arc<RunningServer<S>>,
    reader: R,
    writer: W,
    config: ConnectionConfig,
) -> std::io::Result<()>
where
    S: Send + Sync + 'static,
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let options = server.server.options.clone();
    let max_in_flight = options
        .max_in_flight
        .clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let permits = Arc::new(Semaphore::new(max_in_flight));
    let unwritten = Arc::new(Unwritten::default());
    let (sink, rx) = crate::lowlevel::Sink::counted(OUTBOUND_CAPACITY, unwritten.clone());
    let stream = Stream::new(writer, options.write_timeout, unwritten);
    let (stop_writer, writer_stopped) = oneshot::channel();
    let (room_tx, mut room) = watch::channel(false);
    let running = Running {
        permits: permits.clone(),
        slots: max_in_flight,
    };
    let limits = WriteLimits {
        max_bytes: options.max_outbound_bytes.max(1),
        timeout: options.write_timeout,
        running: running.clone(),
    };
    // The writer task holds the stream; the reader only reaches it while the task runs.
    let in_place = Arc::downgrade(&stream) as Weak<dyn InPlace>;
    let mut writer_task = tokio::spawn(write_lines(rx, stream, writer_stopped, limits, room_tx));
    let conn = Arc::new(Conn {
        session: Session::new(config.kind, sink.clone()),
        server,
        sink,
        in_flight: RunningRequests::default(),
        surface_internal: config.surface_internal,
        room: room.clone(),
        in_place,
        running,
    });

    // Dropped (the caller gave up on the connection) or done: nothing outlives it.
    let _cleanup = Cleanup {
        conn: conn.clone(),
        writer: writer_task.abort_handle(),
    };

    let mut lines = LineReader::new(reader, options.max_message_bytes);
    let reading = conn.read_all(&mut lines, &permits, &mut room, options.max_message_bytes);
    let mut ended = tokio::select! {
        ended = reading => ended,
        written = &mut writer_task => Ended::Output(writer_failure(written)),
    };

    // The peer is gone: nothing it could still answer will arrive, long-lived streams end now,
    // and everything else finishes first, within the grace period.
    conn.session.mark_closed();
    let mut read_error = None;
    if let Ended::Input { parked, error } = ended {
        read_error = error;
        let grace = options.shutdown_grace;
        let finish = async {
            if let Some(work) = parked {
                if let Ok(permit) = permits.clone().acquire_owned().await {
                    conn.start(work, permit, false).await;
                }
            }
            conn.abort_long_lived();
            let _all = permits.acquire_many(max_in_flight as u32).await;
        };
        ended = tokio::select! {
            finished = tokio::time::timeout(grace, finish) => {
                if finished.is_err() {
                    tracing::warn!(
                        connection = config.kind,
                        grace_ms = grace.as_millis() as u64,
                        "input ended; requests still running after the shutdown grace are cancelled"
                    );
                    conn.in_flight.cancel_where(|_| true);
                }
                Ended::Input { parked: None, error: None }
            }
            written = &mut writer_task => Ended::Output(writer_failure(written)),
        };
    }
    if let Ended::Output(e) = &ended {
        tracing::warn!(
            connection = config.kind,
            error = %e,
            "could not write to the peer (it closed its end or reads nothing); running requests are cancelled and the connection ends"
        );
        conn.in_flight.cancel_where(|_| true);
    }
    if conn.session.was_connected() {
        run_close_hooks(&conn.server, &conn.session).await;
    }
    let write_result = match ended {
        Ended::Output(e) => Err(e),
        Ended::Input { .. } => {
            let _ = stop_writer.send(());
            writer_task
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e)))
        }
    };
    match read_error {
        Some(e) => Err(e),
        None => write_result,
    }
}

/// Cancels what still runs of a connection and stops its writer when `serve_lines` returns or
/// is dropped.
struct Cleanup<S: Send + Sync + 'static> {
    conn: Arc<Conn<S>>,
    writer: tokio::task::AbortHandle,
}

impl<S: Send + Sync + 'static> Drop for Cleanup<S> {
    fn drop(&mut self) {
        self.conn.in_flight.cancel_where(|_| true);
        self.writer.abort();
    }
}

/// Why the writer task ended before it was told to stop.
fn writer_failure(written: Result<std::io::Result<()>, tokio::task::JoinError>) -> std::io::Error {
    match written {
        Ok(Err(e)) => std::io::Error::new(e.kind(), format!("could not write to the peer: {e}")),
        Ok(Ok(())) => std::io::Error::other("the writer stopped"),
        Err(e) => std::io::Error::other(e),
    }
}

/// Waits until the writer has room, then reads the next frame. Cancel-safe.
async fn next_frame<R: AsyncRead + Unpin>(
    lines: &mut LineReader<R>,
    room: &mut watch::Receiver<bool>,
) -> std::io::Result<Option<Frame>> {
    // Backpressure: a peer that does not read its answers gets no more requests read.
    if room.wait_for(|over| !*over).await.is_err() {
        // The writer is gone; the caller sees why through the writer task.
        std::future::pending::<()>().await;
    }
    lines.next().await
}

/// A message that needs a slot to run.
enum Work {
    Request {
        id: RequestId,
        method: crate::jsonrpc::Method,
        params: Params,
    },
    Notification {
        method: crate::jsonrpc::Method,
        params: Params,
    },
}

impl<S: Send + Sync + 'static> Conn<S> {
    fn origin(&self) -> Origin<'_, S> {
        Origin {
            server: &self.server,
            session: Some(&self.session),
            sink: &self.sink,
            surface_internal: self.surface_internal,
            http: None,
        }
    }

    /// Reads and routes messages until the input ends. A request that arrives when every
    /// slot is taken waits ("parked"); while it waits, the reader goes on reading, so responses
    /// to the server's own requests and cancellations still get through; a second request stops
    /// the reading until a slot frees (backpressure). Reading also stops while the writer's
    /// queue is full.
    async fn read_all<R: AsyncRead + Unpin>(
        self: &Arc<Self>,
        lines: &mut LineReader<R>,
        permits: &Arc<Semaphore>,
        room: &mut watch::Receiver<bool>,
        max_message_bytes: usize,
    ) -> Ended {
        let mut parked: Option<Work> = None;
        loop {
            let frame = match parked.take() {
                None => next_frame(lines, room).await,
                Some(work) => {
                    tokio::select! {
                        biased;
                        permit = permits.clone().acquire_owned() => {
                            let Ok(permit) = permit else {
                                return Ended::Input { parked: None, error: None };
                            };
                            self.start(work, permit, false).await;
                            continue;
                        }
                        frame = next_frame(lines, room) => {
                            parked = Some(work);
                            frame
                        }
                    }
                }
            };
            let work = match frame {
                Ok(Some(Frame::Line(bytes))) => self.route(&bytes).await,
                Ok(Some(Frame::TooLong)) => {
                    let e = McpError::invalid_request(format!(
                        "Invalid request: message exceeds {max_message_bytes} bytes"
                    ));
                    self.send(jsonrpc::encode_error(None, &e.to_wire(false)))
                        .await;
                    None
                }
                Ok(None) => {
                    return Ended::Input {
                        parked,
                        error: None,
                    }
                }
                Err(e) => {
                    return Ended::Input {
                        parked,
                        error: Some(e),
                    }
                }
            };
            let Some(work) = work else { continue };
            if let Some(waiting) = parked.take() {
                let Ok(permit) = permits.clone().acquire_owned().await else {
                    return Ended::Input {
                        parked: None,
                        error: None,
                    };
                };
                self.start(waiting, permit, false).await;
            }
            match permits.clone().try_acquire_owned() {
                Ok(permit) => {
                    // Nothing more read yet and nothing else running (so nothing read before it
                    // can be overtaken): the request may be answered right here.
                    let alone = !lines.has_buffered() && self.running.count() == 1;
                    self.start(work, permit, alone).await
                }
                Err(_) => parked = Some(work),
            }
        }
    }

    async fn send(&self, line: String) {
        // The writer only stops when the connection ends; a failed send means the peer is gone.
        let _ = self
            .sink
            .send(crate::lowlevel::Outbound::Message(line))
            .await;
    }

    /// Handles what needs no slot (errors, responses, cancellations) and returns the rest.
    async fn route(self: &Arc<Self>, bytes: &[u8]) -> Option<Work> {
        match jsonrpc::decode_borrowed(bytes) {
            Err(e) if e.notification => {
                tracing::debug!(error = %e.error, "malformed notification ignored");
                None
            }
            Err(e) => {
                self.send(jsonrpc::encode_error(
                    e.id.as_ref(),
                    &e.error.to_wire(false),
                ))
                .await;
                None
            }
            Ok(Borrowed::Request { id, method, params }) => Some(Work::Request {
                id,
                method,
                params: Params::from_found(params),
            }),
            Ok(Borrowed::Notification { method, params }) => {
                if method == "notifications/cancelled" {
                    self.cancel(params.as_ref().map(|p| p.text));
                }
                Some(Work::Notification {
                    method,
                    params: Params::from_found(params),
                })
            }
            Ok(Borrowed::Response { id, outcome }) => {
                if !self.session.resolve(&id, outcome) {
                    tracing::debug!(%id, "response to no pending request ignored");
                }
                None
            }
        }
    }

    /// Runs a request or notification in its slot. `alone`: no other message is waiting to be
    /// read or running, so a request may run its first poll here (see
    /// [`spawn_request`](Self::spawn_request)).
    async fn start(self: &Arc<Self>, work: Work, permit: OwnedSemaphorePermit, alone: bool) {
        match work {
            Work::Request { id, method, params } if method == "initialize" => {
                // The handshake runs in order: later requests depend on the session it opens.
                let answer = dispatch::handle_request(self.origin(), id, method, params).await;
                self.send(answer.line).await;
                if self.session.is_initialized() && self.session.begin() {
                    run_hooks(&self.server.server.on_connect, &self.session);
                }
                drop(permit);
            }
            Work::Request { id, method, params } => {
                self.spawn_request(id, method, params, permit, alone).await
            }
            Work::Notification { method, params } => {
                let conn = self.clone();
                tokio::spawn(async move {
                    Box::pin(dispatch::handle_notification(conn.origin(), method, params)).await;
                    drop(permit);
                });
            }
        }
    }

    /// Runs a request in a task of its own, so requests run side by side. When it is `alone`
    /// (nothing more to read yet, nothing else running) it is first polled here, and one that
    /// finishes then (most do) is answered without a task; one that waits goes on in a task.
    /// Requests read in a batch always get tasks: none waits for another's first poll, and
    /// none overtakes a message read before it.
    async fn spawn_request(
        self: &Arc<Self>,
        id: RequestId,
        method: crate::jsonrpc::Method,
        params: Params,
        permit: OwnedSemaphorePermit,
        alone: bool,
    ) {
        let long_lived = method == "subscriptions/listen";
        let conn = self.clone();
        let task_id = id.clone();
        // Boxed: a task holds a pointer, not the whole dispatch future (which spawning would
        // copy, several times).
        let mut handled = Box::pin(async move {
            dispatch::handle_request(conn.origin(), task_id, method, params)
                .await
                .line
        });
        // Alone, it is the only request holding a slot, so no other uses its id (every request
        // in `in_flight` holds its slot until it leaves it).
        if alone && !long_lived {
            if let Some(line) = first_poll(&mut handled).await {
                // The reader waits for the writer's room anyway before it reads on.
                let _ = self.room.clone().wait_for(|over| !*over).await;
                // Free the slot first: the writer then sees nothing running and writes at once.
                drop(permit);
                // Nothing sent before it waits to be written: no need to wake the writer.
                let unsent = match self.in_place.upgrade() {
                    Some(stream) => stream.write_now(line).err(),
                    None => Some(line),
                };
                if let Some(line) = unsent {
                    self.send(line).await;
                }
                return;
            }
        }
        let conn = self.clone();
        let task_id = id.clone();
        let started = self.in_flight.start(id.clone(), long_lived, move || {
            tokio::spawn(async move {
                let line = handled.await;
                // The answer waits, in its slot, until the writer's queue has room: a peer that
                // reads nothing holds at most one answer per slot beyond the queue.
                let _ = conn.room.clone().wait_for(|over| !*over).await;
                conn.in_flight.finish(&task_id);
                conn.send(line).await;
                drop(permit);
            })
            .abort_handle()
        });
        if !started {
            let e = McpError::invalid_request(format!(
                "Invalid request: id {id} is already in use by a request in flight"
            ));
            self.send(jsonrpc::encode_error(Some(&id), &e.to_wire(false)))
                .await;
        }
    }

    /// `notifications/cancelled`: abort the named request; it gets no answer.
    fn cancel(&self, params: Option<&str>) {
        let Some(raw) = params else { return };
        let Ok(p) = serde_json::from_str::<CancelledNotificationParams>(raw) else {
            return;
        };
        let Some(id) = p.request_id else { return };
        if self.in_flight.cancel(&id) {
            tracing::debug!(%id, reason = p.reason.as_deref().unwrap_or(""), "request cancelled");
        }
    }

    fn abort_long_lived(&self) {
        self.in_flight.cancel_where(|&long_lived| long_lived);
    }
}

/// The future's output if it is ready on its first poll (its waker is this task's; a future
/// that waits is polled again, with its own, wherever it goes on).
async fn first_poll<F: std::future::Future + Unpin>(fut: &mut F) -> Option<F::Output> {
    std::future::poll_fn(|cx| match std::pin::Pin::new(&mut *fut).poll(cx) {
        std::task::Poll::Ready(out) => std::task::Poll::Ready(Some(out)),
        std::task::Poll::Pending => std::task::Poll::Ready(None),
    })
    .await
}
