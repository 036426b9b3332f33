//! One connection over a byte stream (stdio, in-memory pipe): reads newline-delimited
//! messages, runs requests concurrently under a bound, writes answers as they finish.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};

use super::dispatch::{self, run_hooks, Origin};
use super::RunningServer;
use crate::error::McpError;
use crate::jsonrpc::{self, Message, RequestId};
use crate::lines::{Frame, LineReader};
use crate::lowlevel::Session;
use crate::peer::RunningRequests;
use crate::types::CancelledNotificationParams;

/// Outbound messages buffered per connection before handlers wait for the writer.
const OUTBOUND_CAPACITY: usize = 1024;
/// Bytes gathered before one write to the stream.
const WRITE_BATCH: usize = 64 * 1024;

/// How a connection is labelled and configured.
pub(crate) struct ConnectionConfig {
    pub(crate) kind: &'static str,
    pub(crate) surface_internal: bool,
}

/// Serves one newline-delimited JSON-RPC connection until `reader` ends, then waits for the
/// requests still running, flushes their answers and returns. The server's lifespan is not
/// touched (the caller started it and stops it).
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
    sink: mpsc::Sender<String>,
    /// The requests running, tagged `true` when long-lived (`subscriptions/listen`).
    in_flight: RunningRequests<bool>,
    surface_internal: bool,
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
    let max_in_flight = options.max_in_flight.clamp(1, Semaphore::MAX_PERMITS);
    let permits = Arc::new(Semaphore::new(max_in_flight));
    let (sink, rx) = mpsc::channel(OUTBOUND_CAPACITY);
    let (stop_writer, writer_stopped) = oneshot::channel();
    let writer_task = tokio::spawn(write_lines(rx, writer, writer_stopped));
    let conn = Arc::new(Conn {
        session: Session::new(config.kind, sink.clone()),
        server,
        sink,
        in_flight: RunningRequests::default(),
        surface_internal: config.surface_internal,
    });

    let mut lines = LineReader::new(reader, options.max_message_bytes);
    let mut read_error = None;
    // A request that arrived when every slot was taken. While it waits, the reader goes on
    // reading, so responses to the server's own requests and cancellations still get through;
    // a second request stops the reading until a slot frees (backpressure).
    let mut parked: Option<Work> = None;
    loop {
        let frame = match parked.take() {
            None => lines.next().await,
            Some(work) => {
                tokio::select! {
                    biased;
                    permit = permits.clone().acquire_owned() => {
                        let Ok(permit) = permit else { break };
                        conn.start(work, permit).await;
                        continue;
                    }
                    frame = lines.next() => {
                        parked = Some(work);
                        frame
                    }
                }
            }
        };
        let work = match frame {
            Ok(Some(Frame::Line(bytes))) => conn.route(&bytes).await,
            Ok(Some(Frame::TooLong)) => {
                let e = McpError::invalid_request(format!(
                    "Invalid request: message exceeds {} bytes",
                    options.max_message_bytes
                ));
                conn.send(jsonrpc::encode_error(None, &e.to_wire(false)))
                    .await;
                None
            }
            Ok(None) => break,
            Err(e) => {
                read_error = Some(e);
                break;
            }
        };
        let Some(work) = work else { continue };
        if let Some(waiting) = parked.take() {
            let Ok(permit) = permits.clone().acquire_owned().await else {
                break;
            };
            conn.start(waiting, permit).await;
        }
        match permits.clone().try_acquire_owned() {
            Ok(permit) => conn.start(work, permit).await,
            Err(_) => parked = Some(work),
        }
    }

    // The peer is gone: nothing it could still answer will arrive, long-lived streams end now,
    // and everything else finishes first.
    conn.session.mark_closed();
    if let Some(work) = parked.take() {
        if let Ok(permit) = permits.clone().acquire_owned().await {
            conn.start(work, permit).await;
        }
    }
    conn.abort_long_lived();
    let _all = permits.acquire_many(max_in_flight as u32).await;
    if conn.session.was_connected() {
        run_hooks(&conn.server.server.on_close, &conn.session);
    }
    let _ = stop_writer.send(());
    let write_result = writer_task.await.unwrap_or(Ok(()));
    match read_error {
        Some(e) => Err(e),
        None => write_result,
    }
}

/// A message that needs a slot to run.
enum Work {
    Request {
        id: RequestId,
        method: String,
        params: Option<Box<serde_json::value::RawValue>>,
    },
    Notification {
        method: String,
        params: Option<Box<serde_json::value::RawValue>>,
    },
}

impl<S: Send + Sync + 'static> Conn<S> {
    fn origin(&self) -> Origin<'_, S> {
        Origin {
            server: &self.server,
            session: &self.session,
            sink: &self.sink,
            surface_internal: self.surface_internal,
            http: None,
        }
    }

    async fn send(&self, line: String) {
        // The writer only stops when the connection ends; a failed send means the peer is gone.
        let _ = self.sink.send(line).await;
    }

    /// Handles what needs no slot (errors, responses, cancellations) and returns the rest.
    async fn route(self: &Arc<Self>, bytes: &[u8]) -> Option<Work> {
        match jsonrpc::decode(bytes) {
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
            Ok(Message::Request { id, method, params }) => {
                Some(Work::Request { id, method, params })
            }
            Ok(Message::Notification { method, params }) => {
                if method == "notifications/cancelled" {
                    self.cancel(params.as_deref());
                }
                Some(Work::Notification { method, params })
            }
            Ok(Message::Response { id, outcome }) => {
                if !self.session.resolve(&id, outcome) {
                    tracing::debug!(%id, "response to no pending request ignored");
                }
                None
            }
        }
    }

    /// Runs a request or notification in its slot.
    async fn start(self: &Arc<Self>, work: Work, permit: OwnedSemaphorePermit) {
        match work {
            Work::Request { id, method, params } if method == "initialize" => {
                // The handshake runs in order: later requests depend on the session it opens.
                let line = dispatch::handle_request(self.origin(), id, method, params).await;
                self.send(line).await;
                if self.session.is_initialized() && self.session.begin() {
                    run_hooks(&self.server.server.on_connect, &self.session);
                }
                drop(permit);
            }
            Work::Request { id, method, params } => {
                self.spawn_request(id, method, params, permit).await
            }
            Work::Notification { method, params } => {
                let conn = self.clone();
                tokio::spawn(async move {
                    dispatch::handle_notification(conn.origin(), method, params).await;
                    drop(permit);
                });
            }
        }
    }

    async fn spawn_request(
        self: &Arc<Self>,
        id: RequestId,
        method: String,
        params: Option<Box<serde_json::value::RawValue>>,
        permit: OwnedSemaphorePermit,
    ) {
        let long_lived = method == "subscriptions/listen";
        let conn = self.clone();
        let task_id = id.clone();
        let started = self.in_flight.start(id.clone(), long_lived, move || {
            tokio::spawn(async move {
                let line =
                    dispatch::handle_request(conn.origin(), task_id.clone(), method, params).await;
                conn.in_flight.finish(&task_id);
                conn.send(line).await;
                drop(permit);
            })
            .abort_handle()
        });
        let duplicate = !started;
        if duplicate {
            let e = McpError::invalid_request(format!(
                "Invalid request: id {id} is already in use by a request in flight"
            ));
            self.send(jsonrpc::encode_error(Some(&id), &e.to_wire(false)))
                .await;
        }
    }

    /// `notifications/cancelled`: abort the named request; it gets no answer.
    fn cancel(&self, params: Option<&serde_json::value::RawValue>) {
        let Some(raw) = params else { return };
        let Ok(p) = serde_json::from_str::<CancelledNotificationParams>(raw.get()) else {
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

/// Appends one message and its newline; the empty "close the stream" marker of
/// `RequestContext::close_stream` means nothing on a byte stream and is skipped.
fn push_line(buf: &mut Vec<u8>, line: &str) {
    if !line.is_empty() {
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
    }
}

/// Moves queued lines into `buf`, up to the batch size.
fn drain(rx: &mut mpsc::Receiver<String>, buf: &mut Vec<u8>) {
    while buf.len() < WRITE_BATCH {
        match rx.try_recv() {
            Ok(line) => push_line(buf, &line),
            Err(_) => break,
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut rx: mpsc::Receiver<String>,
    mut writer: W,
    mut stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(WRITE_BATCH);
    loop {
        let first = tokio::select! {
            biased;
            line = rx.recv() => line,
            _ = &mut stop => None,
        };
        let Some(line) = first else {
            while let Ok(line) = rx.try_recv() {
                push_line(&mut buf, &line);
            }
            writer.write_all(&buf).await?;
            writer.flush().await?;
            return writer.shutdown().await;
        };
        push_line(&mut buf, &line);
        drain(&mut rx, &mut buf);
        if buf.len() < WRITE_BATCH && rx.is_empty() {
            // Let handlers that are about to answer run first, then write their answers in
            // the same system call (a yield costs far less than a write).
            tokio::task::yield_now().await;
            drain(&mut rx, &mut buf);
        }
        writer.write_all(&buf).await?;
        writer.flush().await?;
        buf.clear();
    }
}
