//! In-memory transport: the server runs in this process on one end of a pipe. The bytes are the
//! same newline-delimited JSON-RPC that stdio carries, so tests see exactly what the wire sees.

use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

use crate::error::McpError;
use crate::lines::{Frame, LineReader};
use crate::lowlevel::IntoServer;
use crate::lowlevel::RunningServer;
use crate::transport::connection::{serve_lines, ConnectionConfig};
use crate::transport::wire::{run_lines, Incoming, Transport, Wire};

/// Bytes buffered in each direction of the in-memory pipe.
const PIPE_BYTES: usize = 256 * 1024;

/// A server running in this process, reached through an in-memory pipe carrying the same
/// newline-delimited JSON-RPC that stdio carries. What `Client::connect(server)` uses.
pub struct InMemory<T> {
    server: T,
    surface_internal: bool,
}

impl<T> std::fmt::Debug for InMemory<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemory")
            .field("surface_internal", &self.surface_internal)
            .finish_non_exhaustive()
    }
}

impl<T: IntoServer + Send + 'static> InMemory<T> {
    /// `server`, started when the client connects and stopped (lifespan included) when it
    /// closes. With `surface_internal`, internal errors carry their real text (for tests).
    pub fn new(server: T, surface_internal: bool) -> Self {
        Self {
            server,
            surface_internal,
        }
    }
}

impl<T: IntoServer + Send + 'static> Transport for InMemory<T> {
    async fn run(self, wire: Wire) {
        let incoming = wire.incoming.clone();
        let (end, task) = match start(self.server, self.surface_internal).await {
            Ok(started) => started,
            Err(e) => {
                let reason = format!("the server failed to start: {e}");
                let _ = incoming.send(Incoming::Closed(reason)).await;
                return;
            }
        };
        let (reader, writer) = tokio::io::split(end);
        let ended = run_lines(reader, writer, usize::MAX, wire, "the server").await;
        if let Some(reason) = ended {
            let _ = incoming.send(Incoming::Closed(reason)).await;
        }
        // The server finishes its in-flight requests and its lifespan.
        let _ = task.await;
    }
}

/// Starts `server` on one end of an in-memory pipe; returns the other end and the task serving
/// it (which stops the lifespan when the pipe closes).
pub(crate) async fn start<T: IntoServer>(
    server: T,
    surface_internal: bool,
) -> Result<(DuplexStream, JoinHandle<()>), McpError> {
    let server = server.into_server();
    let surface_internal = surface_internal || server.options.surface_internal_errors;
    let running = RunningServer::start(server).await?;
    let (client_end, server_end) = tokio::io::duplex(PIPE_BYTES);
    let task = tokio::spawn(serve_pipe(running, server_end, surface_internal));
    Ok((client_end, task))
}

async fn serve_pipe<S: Send + Sync + 'static>(
    running: Arc<RunningServer<S>>,
    end: DuplexStream,
    surface_internal: bool,
) {
    let (reader, writer) = tokio::io::split(end);
    let config = ConnectionConfig {
        kind: "memory",
        surface_internal,
    };
    if let Err(e) = serve_lines(running.clone(), reader, writer, config).await {
        tracing::debug!(error = %e, "in-memory connection ended with an error");
    }
    running.stop().await;
}

/// A raw in-memory connection: send lines, receive lines, nothing interpreted. For tests of
/// what exactly the server puts on the wire.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use modelctx_core::transport::RawConnection;
///
/// let mut conn = RawConnection::open(modelctx_core::lowlevel::Server::new("s")).await.unwrap();
/// conn.send("{not json").await.unwrap();
/// let answer = conn.recv_json().await.unwrap();
/// assert_eq!(answer["error"]["code"], -32700);
/// assert_eq!(answer["id"], serde_json::Value::Null);
/// conn.close().await;
/// # });
/// ```
pub struct RawConnection {
    writer: WriteHalf<DuplexStream>,
    reader: LineReader<ReadHalf<DuplexStream>>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for RawConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawConnection")
            .field("server_running", &!self.task.is_finished())
            .finish_non_exhaustive()
    }
}

impl RawConnection {
    /// Starts `server` and connects to it.
    pub async fn open(server: impl IntoServer) -> Result<Self, McpError> {
        Self::open_with(server, false).await
    }

    /// Like [`open`](Self::open), optionally surfacing the real text of internal errors.
    pub async fn open_with(
        server: impl IntoServer,
        surface_internal: bool,
    ) -> Result<Self, McpError> {
        let (end, task) = start(server, surface_internal).await?;
        let (reader, writer) = tokio::io::split(end);
        Ok(Self {
            writer,
            reader: LineReader::new(reader, usize::MAX),
            task,
        })
    }

    /// Sends `line` followed by a newline.
    pub async fn send(&mut self, line: &str) -> std::io::Result<()> {
        self.send_bytes(line.as_bytes()).await
    }

    /// Sends raw bytes followed by a newline.
    pub async fn send_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes).await?;
        self.writer.write_all(b"\n").await?;
        self.writer.flush().await
    }

    /// Sends a JSON value as one line.
    pub async fn send_json(&mut self, value: &Value) -> std::io::Result<()> {
        self.send(&value.to_string()).await
    }

    /// The next line the server wrote (`None` once it closed its end).
    pub async fn recv(&mut self) -> Option<String> {
        match self.reader.next().await {
            Ok(Some(Frame::Line(line))) => Some(String::from_utf8_lossy(&line).into_owned()),
            _ => None,
        }
    }

    /// The next line, parsed as JSON.
    pub async fn recv_json(&mut self) -> Option<Value> {
        serde_json::from_str(&self.recv().await?).ok()
    }

    /// Closes the client's sending side (the server sees end of input) but keeps reading.
    pub async fn finish_sending(&mut self) -> std::io::Result<()> {
        self.writer.shutdown().await
    }

    /// Closes the client's end and waits until the server has finished and stopped.
    pub async fn close(mut self) {
        let _ = self.writer.shutdown().await;
        while self.recv().await.is_some() {}
        let _ = self.task.await;
    }
}
