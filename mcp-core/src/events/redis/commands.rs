//! [`Commands`]: one Redis connection for request/reply commands, shared by the stores.

use tokio::sync::Mutex;

use super::resp::Frame;
use super::{call, open, Conn, Target, REPLY_TIMEOUT};
use crate::error::McpError;

/// One connection to `target`, used by one command at a time. A command that fails on the
/// connection (or gets no reply within [`REPLY_TIMEOUT`]) reconnects once and is retried. The
/// connection is out of its slot while a command is on it: a caller that gives up midway (a
/// dropped request) drops the connection with it, so no later command ever reads the reply
/// meant for an earlier one.
pub(crate) struct Commands {
    target: Target,
    conn: Mutex<Option<Conn>>,
}

impl std::fmt::Debug for Commands {
    /// Where it goes, never the credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redis at {}:{}", self.target.host, self.target.port)
    }
}

impl Commands {
    /// A connection opened on first use.
    pub(crate) fn new(target: Target) -> Self {
        Self {
            target,
            conn: Mutex::new(None),
        }
    }

    /// Connects now and checks the server answers `PING`.
    pub(crate) async fn connect(target: Target) -> Result<Self, McpError> {
        let commands = Self::new(target);
        match commands.run("Redis", &[b"PING"]).await? {
            Frame::Simple(_) => Ok(commands),
            other => Err(McpError::internal(format!(
                "Redis answered PING with {other:?}"
            ))),
        }
    }

    /// Where the connection goes.
    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    /// Runs one command. `what` names the store in errors. A Redis error reply is an error.
    pub(crate) async fn run(&self, what: &str, args: &[&[u8]]) -> Result<Frame, McpError> {
        let mut slot = self.conn.lock().await;
        let mut last = String::new();
        for _ in 0..2 {
            let mut conn = match slot.take() {
                Some(conn) => conn,
                None => open(&self.target).await?,
            };
            match tokio::time::timeout(REPLY_TIMEOUT, call(&mut conn, args)).await {
                Ok(Ok(frame)) => {
                    *slot = Some(conn);
                    return match frame {
                        Frame::Error(e) => Err(McpError::internal(format!(
                            "{what}: Redis refused a command: {e}"
                        ))),
                        frame => Ok(frame),
                    };
                }
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = "no reply in time".into(),
            }
            tracing::warn!(error = %last, "{what}: Redis connection lost; reconnecting");
        }
        Err(McpError::internal(format!(
            "{what}: Redis unreachable: {last}"
        )))
    }
}
