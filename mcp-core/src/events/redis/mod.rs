//! [`RedisBus`]: events shared between processes through Redis pub/sub.

mod commands;
pub(crate) mod resp;

pub(crate) use commands::Commands;

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::{broadcast, mpsc};
use tokio::task::AbortHandle;

use self::resp::Frame;
use super::{Event, EventBus, RECEIVER_CAPACITY};
use crate::error::McpError;

/// The Redis channel events travel on unless another is chosen: `mcp:events`.
pub const DEFAULT_CHANNEL: &str = "mcp:events";

/// Events published but not yet written to Redis before [`publish`](EventBus::publish) refuses
/// more: 1024.
const QUEUE: usize = 1024;
/// How long connecting (and authenticating) may take: 5 s.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest wait between reconnection attempts: 5 s (starting at 100 ms, doubling).
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// A quiet subscriber connection is probed with `PING` after this long, and given up as lost
/// (half-open) after twice this long without a byte: 30 s.
const IDLE_PROBE: Duration = Duration::from_secs(30);
/// How long a `PUBLISH` may wait for its reply before the connection is given up: 10 s.
pub(crate) const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// An [`EventBus`] over Redis pub/sub: every process connected to the same Redis and channel
/// receives every event any of them publishes (its own included, which is how it reaches this
/// process's subscribers too). Behind the `redis` cargo feature; speaks RESP itself over tokio,
/// without a client library.
///
/// - Two connections: one subscribed to the channel, one publishing.
/// - A quiet subscriber connection is probed with `PING` after 30 s and replaced after 60 s
///   without an answer; a `PUBLISH` without a reply in 10 s replaces the publisher connection.
/// - If either drops, it reconnects with backoff (100 ms doubling to 5 s). Events published
///   meanwhile wait in a queue of 1024; while the subscriber was away, events from other
///   processes may have been missed, so on reconnection every list-changed event is delivered
///   locally once (subscribers refetch their lists; resource updates cannot be replayed).
/// - URLs: `redis://[[user]:password@]host[:port][/db]` (the db is ignored: pub/sub spans
///   databases). No TLS.
///
/// ```no_run
/// # async fn run() -> modelctx_core::Result<()> {
/// use modelctx_core::events::RedisBus;
/// use modelctx_core::server::McpServer;
///
/// let bus = RedisBus::connect("redis://127.0.0.1:6379").await?;
/// let server = McpServer::new("replica").event_bus(bus);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisBus {
    inner: Arc<Inner>,
}

struct Inner {
    local: broadcast::Sender<Event>,
    queue: mpsc::Sender<Event>,
    tasks: Vec<AbortHandle>,
    channel: String,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl std::fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus")
            .field("channel", &self.inner.channel)
            .finish()
    }
}

/// Where Redis is and how to log in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) host: String,
    pub(crate) port: u16,
    user: Option<String>,
    password: Option<String>,
}

impl Target {
    pub(crate) fn parse(url: &str) -> Result<Self, McpError> {
        let bad = || McpError::internal(format!("not a redis:// URL: {url}"));
        let rest = url.strip_prefix("redis://").ok_or_else(bad)?;
        let rest = rest.split('/').next().unwrap_or("");
        let (auth, hostport) = match rest.rsplit_once('@') {
            Some((auth, hostport)) => (Some(auth), hostport),
            None => (None, rest),
        };
        let (user, password) = match auth {
            None => (None, None),
            Some(auth) => match auth.split_once(':') {
                Some((user, password)) => (
                    (!user.is_empty()).then(|| user.to_owned()),
                    Some(password.to_owned()),
                ),
                None => (None, Some(auth.to_owned())),
            },
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (host, after) = v6.split_once(']').ok_or_else(bad)?;
            (host, after.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (hostport, None),
            }
        };
        let port = match port {
            Some(p) => p.parse().map_err(|_| bad())?,
            None => 6379,
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(Self {
            host: host.to_owned(),
            port,
            user,
            password,
        })
    }
}

pub(crate) type Conn = BufReader<TcpStream>;

pub(crate) async fn call(conn: &mut Conn, args: &[&[u8]]) -> std::io::Result<Frame> {
    conn.get_mut().write_all(&resp::command(args)).await?;
    resp::read(conn).await
}

/// Connects and logs in.
pub(crate) async fn open(target: &Target) -> Result<Conn, McpError> {
    let connect = async {
        let stream = TcpStream::connect((target.host.as_str(), target.port)).await?;
        stream.set_nodelay(true)?;
        let mut conn = BufReader::new(stream);
        if let Some(password) = &target.password {
            let reply = match &target.user {
                Some(user) => {
                    call(&mut conn, &[b"AUTH", user.as_bytes(), password.as_bytes()]).await?
                }
                None => call(&mut conn, &[b"AUTH", password.as_bytes()]).await?,
            };
            if let Frame::Error(e) = reply {
                return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, e));
            }
        }
        Ok::<_, std::io::Error>(conn)
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(McpError::internal(format!(
            "cannot reach Redis at {}:{}: {e}",
            target.host, target.port
        ))),
        Err(_) => Err(McpError::internal(format!(
            "cannot reach Redis at {}:{}: timed out after {} s",
            target.host,
            target.port,
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// Connects and subscribes to `channel`, waiting for Redis to confirm.
pub(crate) async fn open_subscribed(target: &Target, channel: &str) -> Result<Conn, McpError> {
    let mut conn = open(target).await?;
    let reply = call(&mut conn, &[b"SUBSCRIBE", channel.as_bytes()])
        .await
        .map_err(|e| McpError::internal(format!("Redis SUBSCRIBE failed: {e}")))?;
    match reply {
        Frame::Array(Some(items)) if items.first().and_then(Frame::bytes) == Some(b"subscribe") => {
            Ok(conn)
        }
        other => Err(McpError::internal(format!(
            "Redis SUBSCRIBE was answered {other:?}"
        ))),
    }
}

/// Retries `connect` with backoff until it succeeds.
pub(crate) async fn reconnect<F, Fut>(what: &str, connect: F) -> Conn
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Conn, McpError>>,
{
    let mut wait = Duration::from_millis(100);
    loop {
        tokio::time::sleep(wait).await;
        match connect().await {
            Ok(conn) => {
                tracing::info!(what, "Redis connection restored");
                return conn;
            }
            Err(e) => tracing::warn!(what, error = %e, "Redis still unreachable"),
        }
        wait = (wait * 2).min(MAX_BACKOFF);
    }
}

impl RedisBus {
    /// Connects to Redis at `url` on the [`DEFAULT_CHANNEL`]. Fails when Redis cannot be
    /// reached now (later outages are survived by reconnecting).
    pub async fn connect(url: &str) -> Result<Self, McpError> {
        Self::connect_channel(url, DEFAULT_CHANNEL).await
    }

    /// Connects on `channel` (one per deployment, so unrelated servers sharing a Redis do not
    /// hear each other).
    pub async fn connect_channel(url: &str, channel: &str) -> Result<Self, McpError> {
        let target = Target::parse(url)?;
        let channel = channel.to_owned();
        let subscriber = open_subscribed(&target, &channel).await?;
        let mut publisher = open(&target).await?;
        match call(&mut publisher, &[b"PING"]).await {
            Ok(Frame::Simple(pong)) if pong == "PONG" => {}
            other => {
                return Err(McpError::internal(format!(
                    "Redis did not answer PING: {other:?}"
                )))
            }
        }
        let (local, _) = broadcast::channel(RECEIVER_CAPACITY);
        let (queue, pending) = mpsc::channel(QUEUE);
        let reader = tokio::spawn(receive(
            subscriber,
            target.clone(),
            channel.clone(),
            local.clone(),
        ));
        let writer = tokio::spawn(send(publisher, target, channel.clone(), pending));
        Ok(Self {
            inner: Arc::new(Inner {
                local,
                queue,
                tasks: vec![reader.abort_handle(), writer.abort_handle()],
                channel,
            }),
        })
    }
}

impl EventBus for RedisBus {
    fn publish(&self, event: Event) -> Result<(), McpError> {
        self.inner.queue.try_send(event).map_err(|_| {
            McpError::internal("the Redis event queue is full (Redis unreachable or too slow)")
        })
    }

    fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.local.subscribe()
    }
}

/// Forwards the channel's messages to local subscribers, reconnecting when Redis goes away.
async fn receive(conn: Conn, target: Target, channel: String, local: broadcast::Sender<Event>) {
    let reconnected = local.clone();
    listen(
        conn,
        target,
        channel,
        "subscriber",
        move |payload| match serde_json::from_slice::<Event>(payload) {
            Ok(event) => {
                let _ = local.send(event);
            }
            Err(e) => {
                tracing::warn!(error = %e, "ignored a message on the Redis event channel that is not an event")
            }
        },
        move || {
            // Other processes' events may have been missed meanwhile.
            for event in [
                Event::ToolsChanged,
                Event::PromptsChanged,
                Event::ResourcesChanged,
            ] {
                let _ = reconnected.send(event);
            }
        },
    )
    .await
}

/// Reads a subscribed connection for ever: each `message` payload goes to `on_message`; a
/// quiet connection is probed with a PING (a half-open one is noticed); a lost one is
/// reconnected (and subscribed again) with backoff, then `on_reconnect` runs (messages may have
/// been missed meanwhile). `name` says which subscription in the log.
pub(crate) async fn listen(
    mut conn: Conn,
    target: Target,
    channel: String,
    name: &'static str,
    mut on_message: impl FnMut(&[u8]) + Send,
    mut on_reconnect: impl FnMut() + Send,
) {
    let mut probed = false;
    loop {
        let read = match tokio::time::timeout(IDLE_PROBE, resp::read(&mut conn)).await {
            Ok(read) => {
                probed = false;
                read
            }
            Err(_) if !probed => {
                // Quiet for a while: a PING (allowed while subscribed) must bring an answer.
                probed = true;
                match conn.get_mut().write_all(&resp::command(&[b"PING"])).await {
                    Ok(()) => continue,
                    Err(e) => Err(e),
                }
            }
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no answer to PING: the connection is half-open",
            )),
        };
        match read {
            Ok(Frame::Array(Some(items)))
                if items.len() == 3 && items[0].bytes() == Some(b"message") =>
            {
                on_message(items[2].bytes().unwrap_or_default());
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, subscription = name, "Redis subscription lost; reconnecting");
                conn = reconnect(name, || open_subscribed(&target, &channel)).await;
                probed = false;
                on_reconnect();
            }
        }
    }
}

/// Writes queued events to the channel, reconnecting (and retrying the event) when needed.
async fn send(mut conn: Conn, target: Target, channel: String, mut pending: mpsc::Receiver<Event>) {
    while let Some(event) = pending.recv().await {
        let payload = match serde_json::to_vec(&event) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(error = %e, "an event could not be encoded");
                continue;
            }
        };
        loop {
            let reply = tokio::time::timeout(
                REPLY_TIMEOUT,
                call(&mut conn, &[b"PUBLISH", channel.as_bytes(), &payload]),
            )
            .await
            .unwrap_or_else(|_| {
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no reply to PUBLISH",
                ))
            });
            match reply {
                Ok(Frame::Integer(_)) => break,
                Ok(other) => {
                    tracing::error!(reply = ?other, "Redis refused PUBLISH; event dropped");
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "Redis publisher connection lost; reconnecting");
                    conn = reconnect("publisher", || open(&target)).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_with_and_without_credentials() {
        let t = Target::parse("redis://127.0.0.1:6380/0").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.password),
            ("127.0.0.1", 6380, None)
        );
        let t = Target::parse("redis://:secret@cache").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("cache", 6379));
        assert_eq!(t.password.as_deref(), Some("secret"));
        let t = Target::parse("redis://ops:pw@[::1]:7000").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.user.as_deref()),
            ("::1", 7000, Some("ops"))
        );
        assert!(Target::parse("http://x").is_err());
        assert!(Target::parse("redis://:1").is_err());
    }
}
