//! [`RedisStore`]: 2025-11-25 sessions and their resumable SSE events in Redis, so every
//! replica behind a load balancer serves every session.

use std::time::Duration;

use super::store::{EventStore, Replay, SessionRecord, SessionStore, StoreFuture};
use crate::error::McpError;
use crate::events::redis::resp::Frame;
use crate::events::redis::{listen, open_subscribed, reconnect, Commands, Conn, Target};

/// The prefix of every key unless another is chosen: `mcp`.
const DEFAULT_PREFIX: &str = "mcp";
/// Events replayed per read: 16.
const READ_BATCH: usize = 16;

/// Appends one event, dropping the session's oldest while it is over its bounds, and
/// remembers per stream the highest sequence number dropped (`d:<stream>`).
/// KEYS: list, hash. ARGV: stream, seq, frame, max bytes, max events, ttl ms.
const APPEND: &str = r"
local size = string.len(ARGV[3])
local maxb = tonumber(ARGV[4])
local function dropped(s, q)
  local d = tonumber(redis.call('HGET', KEYS[2], 'd:'..s) or '0')
  if tonumber(q) > d then redis.call('HSET', KEYS[2], 'd:'..s, q) end
end
redis.call('HSET', KEYS[2], 's:'..ARGV[1], '1')
if size > maxb then
  dropped(ARGV[1], ARGV[2])
else
  redis.call('RPUSH', KEYS[1], ARGV[1]..' '..ARGV[2]..' '..ARGV[3])
  local bytes = redis.call('HINCRBY', KEYS[2], 'bytes', size)
  local n = redis.call('LLEN', KEYS[1])
  while n > tonumber(ARGV[5]) or bytes > maxb do
    local old = redis.call('LPOP', KEYS[1])
    local s, q, frame = string.match(old, '^(%d+) (%d+) (.*)$')
    bytes = redis.call('HINCRBY', KEYS[2], 'bytes', -string.len(frame))
    dropped(s, q)
    n = n - 1
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 1
";

/// Sets one field of a session's stream hash (`s:<stream>` opened, `f:<stream>` finished) and
/// its expiry, in one step: a key is never left without a TTL. KEYS: hash. ARGV: field, ttl ms.
const MARK: &str = r"
redis.call('HSET', KEYS[1], ARGV[1], '1')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
";

/// Up to a batch of events of a stream after a sequence number: `{'unknown'}`, `{'gone'}`, or
/// `{'events', finished, seq, frame, seq, frame, ...}`.
/// KEYS: list, hash. ARGV: stream, seq, batch.
const READ: &str = r"
if redis.call('HEXISTS', KEYS[2], 's:'..ARGV[1]) == 0 then return {'unknown'} end
local after = tonumber(ARGV[2])
if tonumber(redis.call('HGET', KEYS[2], 'd:'..ARGV[1]) or '0') > after then return {'gone'} end
local out = {'events', redis.call('HGET', KEYS[2], 'f:'..ARGV[1]) or '0'}
local n = 0
for _, item in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local s, q, frame = string.match(item, '^(%d+) (%d+) (.*)$')
  if s == ARGV[1] and tonumber(q) > after then
    table.insert(out, q)
    table.insert(out, frame)
    n = n + 1
    if n >= tonumber(ARGV[3]) then
      out[2] = '0'
      break
    end
  end
end
return out
";

/// The record, with its expiry (and its events') moved ahead. KEYS: session, list, hash.
/// ARGV: ttl ms.
const LOAD: &str = r"
local record = redis.call('GET', KEYS[1])
if record then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[1])
end
return record
";

/// A [`SessionStore`] and an [`EventStore`] in Redis (cargo feature `redis`), for 2025
/// sessions that any replica of an endpoint can serve. It speaks RESP itself over tokio, with
/// the connection handling of [`RedisBus`](crate::events::RedisBus) (same URLs, 5 s connect
/// timeout, 10 s reply timeout), over one connection that is reopened when it fails (a
/// command that fails on a broken connection is retried once on a new one; a command given up
/// before its reply, as when its HTTP request is dropped, closes the connection, so its reply
/// is never read as another command's).
///
/// Keys (`<prefix>` is `mcp` unless [`prefix`](Self::prefix) says otherwise; ids are the
/// 32-hex-digit `Mcp-Session-Id`):
///
/// | key | type | holds | expires |
/// |---|---|---|---|
/// | `<prefix>:session:<id>` | string | the [`SessionRecord`] as JSON | `session_idle_timeout` after the last request on any replica |
/// | `<prefix>:events:<id>` | list | `"<stream> <seq> <frame>"`, oldest first | with the session, and [`event_ttl`](Self::event_ttl) after the last event |
/// | `<prefix>:streams:<id>` | hash | `s:<stream>` known, `f:<stream>` finished, `d:<stream>` highest seq dropped, `bytes` held | as the list |
///
/// | `<prefix>:answers:all` | pub/sub channel | `{"session", "answer"}`: a client's answer to a server-to-client request, posted to a replica that did not send the request | not stored |
///
/// Bounds per session: [`event_bytes`](Self::event_bytes) (default 4 MiB, as
/// [`HttpConfig::event_store_session_bytes`](super::HttpConfig::event_store_session_bytes))
/// and 1,024 events; the oldest go first, and a `Last-Event-ID` asking for dropped events gets
/// 410 Gone on every replica. There is no bound across sessions: give Redis a `maxmemory`.
/// `DELETE` removes all three keys.
///
/// ```no_run
/// # async fn run() -> modelctx_core::Result<()> {
/// use modelctx_core::transport::{HttpConfig, RedisStore};
///
/// let redis = RedisStore::connect("redis://127.0.0.1:6379").await?;
/// let config = HttpConfig::default()
///     .session_store(redis.clone())
///     .event_store(redis);
/// # drop(config); Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    inner: std::sync::Arc<Inner>,
    prefix: String,
    event_bytes: usize,
    event_ttl: Duration,
}

struct Inner {
    commands: Commands,
    /// Answers forwarded by replicas, heard on `<prefix>:answers` (subscribed on first use).
    answers: std::sync::OnceLock<tokio::sync::broadcast::Sender<(String, String)>>,
    listener: std::sync::OnceLock<tokio::task::AbortHandle>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = self.listener.get() {
            task.abort();
        }
    }
}

/// A forwarded answer on the `<prefix>:answers` channel.
#[derive(serde::Serialize, serde::Deserialize)]
struct Forwarded {
    session: String,
    answer: String,
}

/// Hands every answer forwarded on the answers channel to the replica's waiting requests.
async fn hear_answers(
    conn: Conn,
    target: Target,
    channel: String,
    out: tokio::sync::broadcast::Sender<(String, String)>,
) {
    let on_message = move |payload: &[u8]| {
        if let Ok(f) = serde_json::from_slice::<Forwarded>(payload) {
            let _ = out.send((f.session, f.answer));
        }
    };
    listen(conn, target, channel, "answers", on_message, || {}).await
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("host", &self.inner.commands.target().host)
            .field("port", &self.inner.commands.target().port)
            .field("prefix", &self.prefix)
            .field("event_bytes", &self.event_bytes)
            .field("event_ttl", &self.event_ttl)
            .finish()
    }
}

fn ms(d: Duration) -> String {
    d.as_millis().max(1).to_string()
}

fn refused(what: &str, reply: &Frame) -> McpError {
    McpError::internal(format!("Redis refused {what}: {reply:?}"))
}

impl RedisStore {
    /// Connects to Redis at `url` (`redis://[[user]:password@]host[:port]`; the db is not
    /// selected). Fails when Redis cannot be reached now; later outages fail the requests
    /// that need it (503) until it is back.
    pub async fn connect(url: &str) -> Result<Self, McpError> {
        let target = Target::parse(url)?;
        let store = Self {
            inner: std::sync::Arc::new(Inner {
                commands: Commands::new(target),
                answers: std::sync::OnceLock::new(),
                listener: std::sync::OnceLock::new(),
            }),
            prefix: DEFAULT_PREFIX.to_owned(),
            event_bytes: 4 * 1024 * 1024,
            event_ttl: Duration::from_secs(30 * 60),
        };
        match store.call(&[b"PING"]).await? {
            Frame::Simple(pong) if pong == "PONG" => Ok(store),
            other => Err(refused("PING", &other)),
        }
    }

    /// Prefixes every key with `prefix` (one per deployment sharing a Redis). Default `mcp`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Bytes of events kept per session. Default 4 MiB.
    pub fn event_bytes(mut self, bytes: usize) -> Self {
        self.event_bytes = bytes;
        self
    }

    /// How long a session's events outlive its last event when no request refreshes them.
    /// Default 30 min (the default `session_idle_timeout`).
    pub fn event_ttl(mut self, ttl: Duration) -> Self {
        self.event_ttl = ttl;
        self
    }

    fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:{kind}:{id}", self.prefix)
    }

    /// Runs one command ([`Commands::run`]: reconnects once; a dropped call drops its
    /// connection).
    async fn call(&self, args: &[&[u8]]) -> Result<Frame, McpError> {
        self.inner.commands.run("Redis store", args).await
    }

    /// Sets `field` in the stream hash of `session`, with the events' expiry ([`MARK`]).
    async fn mark(&self, session: &str, field: String) -> Result<(), McpError> {
        let streams = self.key("streams", session);
        self.eval(MARK, &[&streams], &[&field, &ms(self.event_ttl)])
            .await?;
        Ok(())
    }

    async fn eval(&self, script: &str, keys: &[&str], args: &[&str]) -> Result<Frame, McpError> {
        let count = keys.len().to_string();
        let mut all: Vec<&[u8]> = vec![b"EVAL", script.as_bytes(), count.as_bytes()];
        all.extend(keys.iter().map(|k| k.as_bytes()));
        all.extend(args.iter().map(|a| a.as_bytes()));
        self.call(&all).await
    }
}

impl SessionStore for RedisStore {
    fn save<'a>(&'a self, record: &'a SessionRecord, idle: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let json = serde_json::to_vec(record)?;
            let key = self.key("session", &record.id);
            let ttl = ms(idle);
            match self
                .call(&[b"SET", key.as_bytes(), &json, b"PX", ttl.as_bytes()])
                .await?
            {
                Frame::Simple(ok) if ok == "OK" => Ok(()),
                other => Err(refused("SET", &other)),
            }
        })
    }

    fn load<'a>(&'a self, id: &'a str, idle: Duration) -> StoreFuture<'a, Option<SessionRecord>> {
        Box::pin(async move {
            let keys = [
                self.key("session", id),
                self.key("events", id),
                self.key("streams", id),
            ];
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            match self.eval(LOAD, &keys, &[&ms(idle)]).await? {
                Frame::Bulk(Some(json)) => Ok(Some(serde_json::from_slice(&json)?)),
                Frame::Bulk(None) => Ok(None),
                other => Err(refused("GET", &other)),
            }
        })
    }

    fn forward_answer<'a>(&'a self, session: &'a str, answer: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let payload = serde_json::to_vec(&Forwarded {
                session: session.to_owned(),
                answer: answer.to_owned(),
            })?;
            let channel = self.key("answers", "all");
            match self
                .call(&[b"PUBLISH", channel.as_bytes(), &payload])
                .await?
            {
                Frame::Integer(_) => Ok(true),
                other => Err(refused("PUBLISH", &other)),
            }
        })
    }

    fn answers(&self) -> Option<tokio::sync::broadcast::Receiver<(String, String)>> {
        let sender = self.inner.answers.get_or_init(|| {
            let (sender, _) = tokio::sync::broadcast::channel(super::store::ANSWERS);
            let (target, channel, out) = (
                self.inner.commands.target().clone(),
                self.key("answers", "all"),
                sender.clone(),
            );
            let task = tokio::spawn(async move {
                let conn = match open_subscribed(&target, &channel).await {
                    Ok(conn) => conn,
                    Err(e) => {
                        tracing::warn!(error = %e, "Redis answers subscription failed; retrying");
                        reconnect("answers", || open_subscribed(&target, &channel)).await
                    }
                };
                hear_answers(conn, target, channel, out).await;
            });
            let _ = self.inner.listener.set(task.abort_handle());
            sender
        });
        Some(sender.subscribe())
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let (session, events, streams) = (
                self.key("session", id),
                self.key("events", id),
                self.key("streams", id),
            );
            let _ = self
                .call(&[b"DEL", events.as_bytes(), streams.as_bytes()])
                .await?;
            match self.call(&[b"DEL", session.as_bytes()]).await? {
                Frame::Integer(n) => Ok(n > 0),
                other => Err(refused("DEL", &other)),
            }
        })
    }
}

impl EventStore for RedisStore {
    fn open_stream<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, ()> {
        Box::pin(self.mark(session, format!("s:{stream}")))
    }

    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        frame: &'a str,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let keys = [self.key("events", session), self.key("streams", session)];
            let args = [
                stream.to_string(),
                seq.to_string(),
                frame.to_owned(),
                self.event_bytes.to_string(),
                super::events::MAX_EVENTS.to_string(),
                ms(self.event_ttl),
            ];
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            self.eval(APPEND, &keys, &args).await?;
            Ok(())
        })
    }

    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, ()> {
        Box::pin(self.mark(session, format!("f:{stream}")))
    }

    fn read<'a>(&'a self, session: &'a str, stream: u64, seq: u64) -> StoreFuture<'a, Replay> {
        Box::pin(async move {
            let keys = [self.key("events", session), self.key("streams", session)];
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let args = [stream.to_string(), seq.to_string(), READ_BATCH.to_string()];
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let reply = self.eval(READ, &keys, &args).await?;
            let Frame::Array(Some(items)) = reply else {
                return Err(refused("the replay script", &reply));
            };
            let text = |f: &Frame| f.bytes().map(|b| String::from_utf8_lossy(b).into_owned());
            match items.first().and_then(text).as_deref() {
                Some("unknown") => Ok(Replay::Unknown),
                Some("gone") => Ok(Replay::Gone),
                Some("events") => {
                    let finished = items.get(1).and_then(text).as_deref() == Some("1");
                    let mut events = Vec::new();
                    for pair in items[2..].chunks(2) {
                        let (Some(n), Some(frame)) = (
                            pair.first().and_then(text).and_then(|n| n.parse().ok()),
                            pair.get(1).and_then(text),
                        ) else {
                            return Err(McpError::internal("Redis: a malformed stored event"));
                        };
                        events.push((n, frame));
                    }
                    Ok(Replay::Events { events, finished })
                }
                _ => Err(McpError::internal("Redis: an unexpected replay answer")),
            }
        })
    }

    fn remove<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let (events, streams) = (self.key("events", session), self.key("streams", session));
            self.call(&[b"DEL", events.as_bytes(), streams.as_bytes()])
                .await?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncWriteExt, BufReader};
    use tokio::net::TcpListener;

    use super::*;
    use crate::events::redis::resp;
    use crate::types::ClientCapabilities;

    fn record(id: &str) -> SessionRecord {
        SessionRecord {
            id: id.to_owned(),
            protocol_version: "2025-11-25".into(),
            client_info: None,
            client_capabilities: ClientCapabilities::default(),
            log_level: None,
            subscriptions: Vec::new(),
            client_ready: true,
            owner: None,
            client: None,
            created_at_ms: 1,
        }
    }

    /// A fake Redis: answers `PING`, and the load script with the record of the session its
    /// first key names, 300 ms late for a session whose id starts with `slow`. Commands on
    /// one connection are answered in order, as Redis does.
    async fn fake_redis() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut conn = BufReader::new(socket);
                    while let Ok(resp::Frame::Array(Some(args))) = resp::read(&mut conn).await {
                        let arg = |i: usize| {
                            args.get(i)
                                .and_then(resp::Frame::bytes)
                                .map(|b| String::from_utf8_lossy(b).into_owned())
                                .unwrap_or_default()
                        };
                        let reply = if arg(0) == "PING" {
                            b"+PONG\r\n".to_vec()
                        } else {
                            let key = arg(3);
                            let id = key.rsplit(':').next().unwrap_or_default().to_owned();
                            if id.starts_with("slow") {
                                tokio::time::sleep(Duration::from_millis(300)).await;
                            }
                            let json = serde_json::to_vec(&record(&id)).unwrap();
                            let mut out = format!("${}\r\n", json.len()).into_bytes();
                            out.extend_from_slice(&json);
                            out.extend_from_slice(b"\r\n");
                            out
                        };
                        if conn.get_mut().write_all(&reply).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        port
    }

    #[tokio::test]
    async fn a_command_given_up_mid_flight_does_not_hand_its_reply_to_the_next() {
        let port = fake_redis().await;
        let store = RedisStore::connect(&format!("redis://127.0.0.1:{port}"))
            .await
            .unwrap();
        let idle = Duration::from_secs(60);
        // Written, then dropped before its reply (as when the HTTP request is aborted).
        let given_up = tokio::time::timeout(
            Duration::from_millis(50),
            store.load("slow0123456789abcdef0123456789ab", idle),
        )
        .await;
        assert!(given_up.is_err(), "the slow reply is not there yet");
        let next = store
            .load("fast0123456789abcdef0123456789ab", idle)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(next.id, "fast0123456789abcdef0123456789ab");
        // Past the slow reply's delay, the store still answers each command with its own.
        tokio::time::sleep(Duration::from_millis(400)).await;
        let later = store
            .load("next0123456789abcdef0123456789ab", idle)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(later.id, "next0123456789abcdef0123456789ab");
    }
}
