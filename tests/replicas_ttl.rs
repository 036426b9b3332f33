//! Every key `RedisStore` writes expires: after a session's traffic through a real server, and
//! after each `EventStore` write on its own (a stream finished in a hash no other write made
//! first included), each key under the store's prefix has a TTL (`PTTL` > 0).
//!
//! Needs Redis: `MCP_TEST_REDIS_URL`, or a `redis-server` on `PATH` started here; skipped with
//! a notice without either (a failure under `MCP_TEST_REQUIRE_REDIS=1`).

mod support;

use std::time::Duration;

use modelctx::prelude::*;
use modelctx::transport::{EventStore, HttpConfig, RedisStore};
use serde_json::json;
use support::raw_http::send;
use support::redis::redis;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Logs one step (so its answer is an SSE stream with events), then answers.
#[tool]
async fn step(ctx: RequestContext) -> modelctx::Result<String> {
    ctx.log(LoggingLevel::Error, "step").await?;
    Ok("done".into())
}

/// A RESP reply: enough of it for `SCAN` and `PTTL`.
#[derive(Debug)]
enum Resp {
    Int(i64),
    Text(String),
    List(Vec<Resp>),
}

/// One RESP connection to read what the store wrote.
struct RedisConn(BufReader<TcpStream>);

impl RedisConn {
    async fn connect(addr: &str) -> Self {
        Self(BufReader::new(TcpStream::connect(addr).await.unwrap()))
    }

    async fn call(&mut self, args: &[&str]) -> Resp {
        let mut out = format!("*{}\r\n", args.len());
        for arg in args {
            out.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        self.0.get_mut().write_all(out.as_bytes()).await.unwrap();
        self.read().await
    }

    async fn read(&mut self) -> Resp {
        let mut line = String::new();
        self.0.read_line(&mut line).await.unwrap();
        let (kind, rest) = line.trim_end().split_at(1);
        match kind {
            ":" => Resp::Int(rest.parse().unwrap()),
            "+" => Resp::Text(rest.to_owned()),
            "$" => {
                let len: usize = rest.parse().unwrap();
                let mut data = vec![0; len + 2];
                self.0.read_exact(&mut data).await.unwrap();
                data.truncate(len);
                Resp::Text(String::from_utf8(data).unwrap())
            }
            "*" => {
                let n: usize = rest.parse().unwrap();
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(Box::pin(self.read()).await);
                }
                Resp::List(items)
            }
            _ => panic!("unexpected Redis reply {line:?}"),
        }
    }

    /// Every key matching `pattern`, with its `PTTL`.
    async fn ttls(&mut self, pattern: &str) -> Vec<(String, i64)> {
        let mut keys = Vec::new();
        let mut cursor = "0".to_owned();
        loop {
            let Resp::List(reply) = self
                .call(&["SCAN", &cursor, "MATCH", pattern, "COUNT", "1000"])
                .await
            else {
                panic!("SCAN answers a list");
            };
            let [Resp::Text(next), Resp::List(found)] = &reply[..] else {
                panic!("SCAN answers a cursor and keys: {reply:?}");
            };
            for key in found {
                let Resp::Text(key) = key else {
                    panic!("a key")
                };
                keys.push(key.clone());
            }
            if next == "0" {
                break;
            }
            cursor = next.clone();
        }
        let mut ttls = Vec::new();
        for key in keys {
            let Resp::Int(ttl) = self.call(&["PTTL", &key]).await else {
                panic!("PTTL answers an integer");
            };
            ttls.push((key, ttl));
        }
        ttls.sort();
        ttls
    }
}

fn in_session(sid: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_key_the_redis_store_writes_expires() {
    let Some((url, _own)) = redis() else { return };
    // The RESP client below takes `host:port` (a URL with a password is not supported here).
    let addr = url.trim_start_matches("redis://").to_owned();
    let prefix = format!("mcp-test:ttl:{}", std::process::id());
    let store = RedisStore::connect(&url)
        .await
        .expect("Redis is reachable")
        .prefix(prefix.clone());
    let mut redis = RedisConn::connect(&addr).await;

    // Each write on its own: a stream opened; one finished with nothing written before it
    // (its hash is created by the finish); events appended and their stream finished.
    store.open_stream("opened", 7).await.unwrap();
    store.finish("finished-only", 8).await.unwrap();
    store.open_stream("whole", 9).await.unwrap();
    store
        .append("whole", 9, 1, "id: 9-1\ndata: {}\n\n")
        .await
        .unwrap();
    store.finish("whole", 9).await.unwrap();
    let ttls = redis.ttls(&format!("{prefix}:*")).await;
    let keys: Vec<&str> = ttls.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            format!("{prefix}:events:whole"),
            format!("{prefix}:streams:finished-only"),
            format!("{prefix}:streams:opened"),
            format!("{prefix}:streams:whole"),
        ]
    );
    for (key, ttl) in &ttls {
        assert!(*ttl > 0, "{key} has PTTL {ttl}");
    }

    // A session's traffic through a real server: the record, its stream, its events.
    let config = HttpConfig::default()
        .session_store(store.clone())
        .event_store(store.clone());
    let server = McpServer::new("ttl").tool(StepTool);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        server
            .serve_http_on(listener, config, async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let reply = send(port, "POST", &[], &init.to_string()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let sid = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = send(port, "POST", &in_session(&sid), &ready.to_string()).await;
    assert_eq!(reply.status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "step", "arguments": {}}});
    let reply = send(port, "POST", &in_session(&sid), &call.to_string()).await;
    assert_eq!(
        reply.events().len(),
        2,
        "a log and the result: {}",
        reply.body
    );
    // The stream's finish reaches Redis in the background.
    let session_keys = format!("{prefix}:*:{sid}");
    for _ in 0..100 {
        let finished = match redis
            .call(&["HKEYS", &format!("{prefix}:streams:{sid}")])
            .await
        {
            Resp::List(fields) => fields
                .iter()
                .any(|f| matches!(f, Resp::Text(f) if f.starts_with("f:"))),
            _ => false,
        };
        if finished {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ttls = redis.ttls(&session_keys).await;
    let kinds: Vec<&str> = ttls
        .iter()
        .filter_map(|(k, _)| k.split(':').rev().nth(1))
        .collect();
    assert_eq!(kinds, ["events", "session", "streams"], "{ttls:?}");
    for (key, ttl) in &ttls {
        assert!(*ttl > 0, "{key} has PTTL {ttl}");
    }
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}
