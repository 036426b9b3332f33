//! What travels from a handler to the transport on a request's (or a session's) stream.

use tokio::sync::mpsc;

/// One item of an outbound stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outbound {
    /// An encoded JSON-RPC message: a notification, or a request to the client.
    Message(String),
    /// Close the stream now, the request going on (2025 HTTP: the client reconnects with
    /// `Last-Event-ID`; the standalone `GET` stream of a session that ended). Transports
    /// without such streams ignore it.
    Close,
}

impl Outbound {
    /// The message, unless this is [`Close`](Self::Close).
    pub(crate) fn into_message(self) -> Option<String> {
        match self {
            Self::Message(line) => Some(line),
            Self::Close => None,
        }
    }
}

/// The sending end of an outbound stream.
pub(crate) type Sink = mpsc::Sender<Outbound>;

/// The receiving end of an outbound stream.
pub(crate) type Outbox = mpsc::Receiver<Outbound>;
