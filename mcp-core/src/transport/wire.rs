//! The client's side of a transport: the [`Transport`] trait, the [`Wire`] it moves messages
//! through, and what travels on it ([`Outgoing`], [`Incoming`]).
//!
//! A transport is a task that carries messages between the connection engine and the server:
//! it takes [`Outgoing`] messages from [`Wire::outgoing`] and delivers them, and pushes what the
//! server sends into [`Wire::incoming`]. When `outgoing` ends (the client closed), it shuts the
//! connection down the way its medium wants (close stdin and wait for the process, `DELETE` the
//! HTTP session) and returns.
//!
//! The built-in transports are [`ChildProcess`](super::ChildProcess) (stdio),
//! [`HttpClientTransport`](super::HttpClientTransport) (Streamable HTTP), [`Lines`] (any byte
//! stream: a Unix socket, a TCP stream, a pipe), and the in-memory pipe behind
//! `Client::connect(server)`.

use std::future::Future;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::era::Era;
use crate::error::McpError;
use crate::jsonrpc::RequestId;
use crate::lines::{Frame, LineReader};

/// Carries JSON-RPC messages between a client and a server.
///
/// Implement it to plug in a medium this crate does not ship (a WebSocket, a message queue):
/// forward [`Wire::outgoing`] to the peer, push every message the peer sends into
/// [`Wire::incoming`], and return when `outgoing` ends or the peer goes away. Byte streams
/// need no code: [`Lines`] frames any `AsyncRead` + `AsyncWrite` pair.
///
/// ```
/// use modelctx_core::transport::{Incoming, Transport, Wire};
/// use tokio::sync::mpsc;
///
/// /// Messages to and from channels, e.g. bridged to a WebSocket elsewhere.
/// #[derive(Debug)]
/// struct Channels {
///     to_server: mpsc::Sender<String>,
///     from_server: mpsc::Receiver<Vec<u8>>,
/// }
///
/// impl Transport for Channels {
///     async fn run(mut self, mut wire: Wire) {
///         loop {
///             tokio::select! {
///                 out = wire.outgoing.recv() => match out {
///                     Some(message) => {
///                         if self.to_server.send(message.body).await.is_err() { break }
///                     }
///                     None => break,
///                 },
///                 inbound = self.from_server.recv() => match inbound {
///                     Some(bytes) => {
///                         if wire.incoming.send(Incoming::Message(bytes)).await.is_err() { break }
///                     }
///                     None => {
///                         let _ = wire.incoming.send(Incoming::Closed("peer went away".into())).await;
///                         break;
///                     }
///                 },
///             }
///         }
///     }
/// }
/// ```
pub trait Transport: Send + 'static {
    /// Runs the transport until `wire.outgoing` ends or the peer goes away.
    fn run(self, wire: Wire) -> impl Future<Output = ()> + Send + 'static;

    /// True for a transport that sends [`Outgoing::headers`] (HTTP): the client then learns
    /// each tool's `x-mcp-header` arguments before calling it. Default false.
    fn carries_headers(&self) -> bool {
        false
    }
}

/// The two channels between the connection engine and a [`Transport`].
#[derive(Debug)]
pub struct Wire {
    /// Messages to deliver, in order. Ends when the client closes.
    pub outgoing: mpsc::Receiver<Outgoing>,
    /// Where the messages the server sends go, and why the connection ended.
    pub incoming: mpsc::Sender<Incoming>,
}

/// One message to deliver: its encoded JSON-RPC text plus what a transport with a header layer
/// (HTTP) needs without parsing the body again.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Outgoing {
    /// One JSON-RPC message, without a trailing newline.
    pub body: String,
    /// What the body is.
    pub kind: OutgoingKind,
    /// The method, for requests and notifications (`Mcp-Method` on 2026 HTTP).
    pub method: Option<Arc<str>>,
    /// The era the message belongs to.
    pub era: Era,
    /// The protocol version to announce (the `MCP-Protocol-Version` header); `None` before
    /// `initialize` is answered.
    pub protocol_version: Option<Arc<str>>,
    /// `params.name` of `tools/call` and `prompts/get`, `params.uri` of `resources/read`
    /// (`Mcp-Name` on 2026 HTTP), unencoded.
    pub name: Option<String>,
    /// Further headers for HTTP: `Mcp-Param-*` of the tool's `x-mcp-header` arguments (values
    /// already encoded) and the request's own headers. Other transports ignore them.
    pub headers: Vec<(String, String)>,
}

/// What an [`Outgoing`] message is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutgoingKind {
    /// A request; its answer comes back under this id.
    Request(RequestId),
    /// A notification.
    Notification,
    /// `notifications/cancelled` for request `id`: the client gave up on it. On 2026 HTTP the
    /// transport closes that request's response instead of sending anything.
    Cancel(RequestId),
    /// The answer to a request the server sent (2025).
    Response,
}

/// What a transport hands the connection engine.
#[derive(Debug)]
#[non_exhaustive]
pub enum Incoming {
    /// One JSON-RPC message from the server.
    Message(Vec<u8>),
    /// A message the transport knows to be the answer to request `id` (an HTTP response body):
    /// one that is not JSON-RPC fails that request only, where on a stream it ends the
    /// connection.
    Answer {
        /// The request it answers.
        id: RequestId,
        /// The message.
        message: Vec<u8>,
    },
    /// The request `id` failed in the transport (HTTP error status, connection refused, a
    /// stream cut that cannot be resumed): it resolves to `error`.
    Failed {
        /// The request.
        id: RequestId,
        /// Why.
        error: McpError,
    },
    /// The connection is over: every waiting request fails with this reason.
    Closed(String),
}

/// A transport over any byte stream, one JSON-RPC message per line (the stdio framing, which
/// the spec recommends for Unix sockets and TCP too).
///
/// ```no_run
/// # async fn run() -> modelctx_core::Result<()> {
/// use modelctx_core::client::Client;
/// use modelctx_core::transport::Lines;
///
/// let socket = tokio::net::TcpStream::connect("127.0.0.1:9000").await?;
/// let (read, write) = socket.into_split();
/// let client = Client::builder().connect(Lines::new(read, write)).await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Lines<R, W> {
    reader: R,
    writer: W,
    max_message_bytes: usize,
}

/// The largest message a client reads by default (64 MiB); longer ones are skipped and logged.
pub const DEFAULT_CLIENT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

impl<R, W> Lines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Reads messages from `reader`, writes them to `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Self {
            reader,
            writer,
            max_message_bytes: DEFAULT_CLIENT_MAX_MESSAGE_BYTES,
        }
    }

    /// The largest message read (default [`DEFAULT_CLIENT_MAX_MESSAGE_BYTES`]).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }
}

impl<R, W> Transport for Lines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    async fn run(self, wire: Wire) {
        let incoming = wire.incoming.clone();
        if let Some(reason) = run_lines(
            self.reader,
            self.writer,
            self.max_message_bytes,
            wire,
            "the server",
        )
        .await
        {
            let _ = incoming.send(Incoming::Closed(reason)).await;
        }
    }
}

/// Moves messages over a newline-delimited byte stream until either side ends. Returns `None`
/// when the client closed (`outgoing` ended; the writer is shut down), or why the peer's side
/// failed or ended, for the caller to report as [`Incoming::Closed`].
pub(crate) async fn run_lines<R, W>(
    reader: R,
    mut writer: W,
    max: usize,
    wire: Wire,
    peer: &str,
) -> Option<String>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    let Wire {
        mut outgoing,
        incoming,
    } = wire;
    let mut lines = LineReader::new(reader, max);
    let mut buf = Vec::with_capacity(8 * 1024);
    loop {
        tokio::select! {
            out = outgoing.recv() => {
                let Some(first) = out else {
                    let _ = writer.shutdown().await;
                    return None;
                };
                buf.clear();
                push(&mut buf, &first);
                // Everything already queued goes out in the same write.
                while buf.len() < 64 * 1024 {
                    match outgoing.try_recv() {
                        Ok(next) => push(&mut buf, &next),
                        Err(_) => break,
                    }
                }
                if let Err(e) = write_all(&mut writer, &buf).await {
                    return Some(format!("could not write to {peer}: {e}"));
                }
            }
            frame = lines.next() => {
                return Some(match frame {
                    Ok(Some(Frame::Line(bytes))) => {
                        if incoming.send(Incoming::Message(bytes)).await.is_err() {
                            return None;
                        }
                        continue;
                    }
                    Ok(Some(Frame::TooLong)) => {
                        tracing::warn!(max, "{peer} sent a message longer than the limit; skipped");
                        continue;
                    }
                    Ok(None) => format!("{peer} closed the connection"),
                    Err(e) => format!("could not read from {peer}: {e}"),
                });
            }
        }
    }
}

fn push(buf: &mut Vec<u8>, message: &Outgoing) {
    buf.extend_from_slice(message.body.as_bytes());
    buf.push(b'\n');
}

async fn write_all<W: AsyncWrite + Unpin>(writer: &mut W, buf: &[u8]) -> std::io::Result<()> {
    writer.write_all(buf).await?;
    writer.flush().await
}

#[cfg(feature = "client")]
/// A header value as the 2026 transport writes it: plain when it is header-safe ASCII without
/// surrounding whitespace, else `=?base64?...?=` of its UTF-8 (also when the plain text looks
/// like that form).
pub(crate) fn encode_header_value(value: &str) -> String {
    let header_safe = value.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let looks_encoded = value.starts_with("=?base64?") && value.ends_with("?=");
    if header_safe && !padded && !looks_encoded {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", crate::base64::encode(value.as_bytes()))
    }
}
