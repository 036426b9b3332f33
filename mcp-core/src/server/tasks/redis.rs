//! [`RedisTaskStore`]: tasks kept in Redis, shared by every replica that uses the same Redis.

use std::sync::Arc;

use super::store::{TaskRecord, TaskStore};
use crate::error::McpError;
use crate::events::redis::resp::Frame;
use crate::events::redis::{Commands, Target};
use crate::lowlevel::BoxFuture;

/// The prefix of the default store's keys: `mcp:task:<taskId>`.
pub const DEFAULT_TASK_PREFIX: &str = "mcp:task:";

/// A [`TaskStore`] in Redis (cargo feature `redis`): each task is one JSON string under
/// `<prefix><taskId>` (default prefix [`DEFAULT_TASK_PREFIX`]) that Redis drops at the task's
/// expiry (`PXAT`: `ttlMs` after its creation, however often it changed). A change is one Lua
/// script that compares the stored version and writes only if it is still the one read, so
/// replicas never overwrite each other's transitions. Needs Redis 6.2 or newer. Every replica given a store on the same
/// Redis reads every replica's tasks (a task whose tool runs on replica A is polled, updated
/// and cancelled through replica B; the tool itself runs again, after `tasks/update`, on the
/// replica that received the update).
///
/// One connection, used by one command at a time; a command that fails on the connection (or
/// gets no reply within 10 s) reconnects once and is retried. URLs:
/// `redis://[[user]:password@]host[:port]` (the database number is ignored).
///
/// ```no_run
/// # async fn run() -> modelctx_core::Result<()> {
/// use modelctx_core::server::{McpServer, RedisTaskStore};
///
/// let store = RedisTaskStore::connect("redis://127.0.0.1:6379").await?;
/// let server = McpServer::new("jobs").task_store(store);
/// # let _ = server; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisTaskStore {
    inner: Arc<Inner>,
}

struct Inner {
    commands: Commands,
    /// `host:port` as given (no credentials), for `Debug`.
    at: String,
    prefix: String,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("at", &self.inner.at)
            .field("prefix", &self.inner.prefix)
            .finish()
    }
}

impl RedisTaskStore {
    /// Connects to `url` (checked with a `PING`), keys prefixed [`DEFAULT_TASK_PREFIX`].
    pub async fn connect(url: &str) -> Result<Self, McpError> {
        Self::connect_prefixed(url, DEFAULT_TASK_PREFIX).await
    }

    /// Connects to `url`, keys prefixed `prefix` (servers that must not see each other's
    /// tasks on one Redis use different prefixes).
    pub async fn connect_prefixed(url: &str, prefix: &str) -> Result<Self, McpError> {
        let commands = Commands::connect(Target::parse(url)?).await?;
        Ok(Self {
            inner: Arc::new(Inner {
                commands,
                at: url
                    .trim_start_matches("redis://")
                    .rsplit('@')
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                prefix: prefix.to_owned(),
            }),
        })
    }
}

impl Inner {
    async fn run(&self, args: &[&[u8]]) -> Result<Frame, McpError> {
        self.commands.run("Redis task store", args).await
    }
}

/// Stores the new task `ARGV[1]` in `KEYS[1]`, expiring at `ARGV[2]` (ms since the epoch),
/// unless the key holds another value. 1 if stored (or already stored: a retry after a lost
/// reply succeeds), 0 if the id is taken.
const CREATE: &str = r#"
local stored = redis.call('GET', KEYS[1])
if stored then
  if stored == ARGV[1] then return 1 end
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
return 1
"#;

/// Replaces the task in `KEYS[1]` with `ARGV[1]` (whose version is `ARGV[4]`) if its stored
/// version is `ARGV[2]`; the new value keeps the expiry `ARGV[3]` (ms since the epoch). 1 if
/// written (or already written: a retry after a lost reply succeeds), 0 if not. Versions stay
/// below 10^14, which Lua's numbers print exactly.
const REPLACE: &str = r#"
local stored = redis.call('GET', KEYS[1])
if not stored then return 0 end
local ok, task = pcall(cjson.decode, stored)
if not ok then return 0 end
local version = string.format('%.0f', task['version'] or 0)
if version == ARGV[4] then return 1 end
if version ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
return 1
"#;

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), McpError>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let key = format!("{}{}", inner.prefix, record.task_id);
            let value = serde_json::to_vec(&record)?;
            let expires = record.expires_at_ms.max(1).to_string();
            let frame = inner
                .run(&[
                    b"EVAL",
                    CREATE.as_bytes(),
                    b"1",
                    key.as_bytes(),
                    &value,
                    expires.as_bytes(),
                ])
                .await?;
            match frame {
                Frame::Integer(1) => Ok(()),
                _ => Err(McpError::internal("Redis task store: the task id is taken")),
            }
        })
    }

    fn get(&self, task_id: &str) -> BoxFuture<Result<Option<TaskRecord>, McpError>> {
        let inner = self.inner.clone();
        let key = format!("{}{}", inner.prefix, task_id);
        Box::pin(async move {
            match inner.run(&[b"GET", key.as_bytes()]).await? {
                Frame::Bulk(Some(bytes)) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                    McpError::internal(format!("Redis task store: unreadable task record: {e}"))
                }),
                _ => Ok(None),
            }
        })
    }

    fn replace(&self, record: TaskRecord, read: u64) -> BoxFuture<Result<bool, McpError>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let key = format!("{}{}", inner.prefix, record.task_id);
            let (read, new) = (read.to_string(), record.version.to_string());
            let value = serde_json::to_vec(&record)?;
            let expires = record.expires_at_ms.max(1).to_string();
            let frame = inner
                .run(&[
                    b"EVAL",
                    REPLACE.as_bytes(),
                    b"1",
                    key.as_bytes(),
                    &value,
                    read.as_bytes(),
                    expires.as_bytes(),
                    new.as_bytes(),
                ])
                .await?;
            Ok(matches!(frame, Frame::Integer(1)))
        })
    }
}
