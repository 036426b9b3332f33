//! 2025-11-25 sessions that survive a replica: two servers (the same code, two `serve_http_on`
//! listeners) share a session store and an event store; a session opened on A is served by B
//! (requests, the GET stream, `Last-Event-ID` replay of a stream A wrote), survives A's
//! shutdown, and is gone for both once deleted on one or expired.
//!
//! Each scenario runs twice: with the in-process `MemorySessionStore`/`MemoryEventStore` shared
//! by both endpoints (always), and with a real Redis (`RedisStore`). `.ci/run` starts
//! `redis-server` and sets `MCP_TEST_REDIS_URL` and `MCP_TEST_REQUIRE_REDIS=1`; without the URL
//! the Redis tests start their own `redis-server` from `PATH`, and skip with a notice when
//! there is none (a failure under `MCP_TEST_REQUIRE_REDIS=1`).

mod support;

use std::time::Duration;

use modelctx::events::Event;
use modelctx::prelude::*;
use modelctx::transport::{HttpConfig, MemoryEventStore, MemorySessionStore, RedisStore};
use serde_json::{json, Value};
use support::raw_http::{send, Reply};
use support::redis::redis;
use support::sse::SseStream;

/// Logs two steps (so its answer is an SSE stream with events), then answers.
#[tool]
async fn steps(ctx: RequestContext) -> modelctx::Result<String> {
    ctx.log(LoggingLevel::Error, "step one").await?;
    ctx.log(LoggingLevel::Error, "step two").await?;
    Ok("all steps done".into())
}

/// What this session is, as the replica serving the request sees it.
#[tool]
async fn whoami(ctx: RequestContext) -> String {
    let Some(session) = ctx.session() else {
        return "no session".into();
    };
    let client = session.client_info().map(|i| i.name.clone());
    format!(
        "{} {:?} {:?}",
        client.unwrap_or_default(),
        session.log_level(),
        session.protocol_version()
    )
}

/// Counts the client's roots (a server-to-client request, answered by the client).
#[tool]
async fn count_roots(ctx: RequestContext) -> modelctx::Result<String> {
    let roots: Value = ctx.request("roots/list", json!({})).await?;
    Ok(format!(
        "{} roots",
        roots["roots"].as_array().map_or(0, Vec::len)
    ))
}

/// Says hello.
#[tool]
async fn hello() -> String {
    "hello".into()
}

/// One replica: the same server code, on its own listener, with `config`.
async fn replica(
    config: HttpConfig,
) -> (
    u16,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
    modelctx::server::ServerHandle<()>,
) {
    let server = McpServer::new("replica")
        .tool(StepsTool)
        .tool(WhoamiTool)
        .tool(CountRootsTool);
    let handle = server.handle();
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
    (port, stop, task, handle)
}

fn in_session(sid: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

async fn post(port: u16, sid: &str, body: Value) -> Reply {
    send(port, "POST", &in_session(sid), &body.to_string()).await
}

/// `initialize` (as client `t`) and `notifications/initialized` on `port`; the session id.
async fn open(port: u16) -> String {
    open_with(port, json!({})).await
}

/// [`open`] declaring `capabilities`.
async fn open_with(port: u16, capabilities: Value) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "1"}}});
    let reply = send(port, "POST", &[], &body.to_string()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let sid = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(port, &sid, note).await.status, 202);
    sid
}

async fn call(port: u16, sid: &str, id: i64, tool: &str) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}}});
    post(port, sid, body).await
}

/// `GET` with `Last-Event-ID: last` on `port`.
async fn resume(port: u16, sid: &str, last: &str) -> Reply {
    let mut headers = in_session(sid).to_vec();
    headers.push(("Last-Event-ID", last));
    send(port, "GET", &headers, "").await
}

fn text(reply: &Reply) -> String {
    let message = reply.message();
    message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a tool result, got {} {}", reply.status, reply.body))
        .to_owned()
}

/// The `id:` of every event of an SSE body, in order.
fn event_ids(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(str::to_owned)
        .collect()
}

/// The scenario, on two replicas configured by `config` (each call a config sharing the
/// same stores).
async fn served_by_either_replica(config: impl Fn() -> HttpConfig) {
    let (a, stop_a, a_task, _a_handle) = replica(config()).await;
    let (b, stop_b, _b_task, b_handle) = replica(config()).await;

    // Opened on A, with a log level set on A...
    let sid = open(a).await;
    let level = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "error"}});
    assert_eq!(post(a, &sid, level).await.message()["result"], json!({}));
    let subscribe = json!({"jsonrpc": "2.0", "id": 9, "method": "resources/subscribe", "params": {"uri": "shop://stock"}});
    assert_eq!(
        post(a, &sid, subscribe).await.message()["result"],
        json!({})
    );

    // ...served by B, which rebuilt it from the store: same client, level and version.
    let reply = call(b, &sid, 2, "whoami").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        text(&reply),
        "t Some(Error) Some(\"2025-11-25\")",
        "B knows what A negotiated"
    );

    // The GET stream on B carries the session's notifications (B registered the session).
    let mut stream = SseStream::open(b, "GET", &in_session(&sid), "").await;
    assert_eq!(stream.status, 200);
    b_handle.add_tool(HelloTool).unwrap();
    assert_eq!(
        stream.next_json().await["method"],
        "notifications/tools/list_changed"
    );
    // B knows the URI the session subscribed to on A.
    b_handle
        .publish(Event::ResourceUpdated {
            uri: "shop://stock".into(),
        })
        .unwrap();
    let updated = stream.next_json().await;
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "shop://stock");

    // A POST stream on A: priming event, two logs, the result, each with an id.
    let reply = call(a, &sid, 3, "steps").await;
    assert_eq!(reply.status, 200);
    let events = reply.events();
    assert_eq!(events.len(), 3, "{}", reply.body);
    assert_eq!(events[2]["result"]["content"][0]["text"], "all steps done");
    let ids = event_ids(&reply.body);
    assert_eq!(ids.len(), 4, "{}", reply.body);

    // Resumed on B after the first log: the rest of A's stream, from the shared store.
    let replay = resume(b, &sid, &ids[1]).await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    assert_eq!(event_ids(&replay.body), ids[2..].to_vec());
    let replayed = replay.events();
    assert_eq!(replayed[0]["params"]["data"], "step two");
    assert_eq!(
        replayed[1]["result"]["content"][0]["text"],
        "all steps done"
    );
    // A stream no replica wrote is refused (400, not 404: the session is fine).
    assert_eq!(resume(b, &sid, "12345-1").await.status, 400);

    // A second session, held by both replicas, deleted on B: gone on A too.
    let other = open(a).await;
    assert_eq!(
        text(&call(b, &other, 4, "whoami").await).split(' ').next(),
        Some("t")
    );
    assert_eq!(
        text(&call(a, &other, 5, "whoami").await).split(' ').next(),
        Some("t")
    );
    assert_eq!(send(b, "DELETE", &in_session(&other), "").await.status, 200);
    assert_eq!(call(a, &other, 6, "whoami").await.status, 404);
    assert_eq!(call(b, &other, 7, "whoami").await.status, 404);
    assert_eq!(send(a, "DELETE", &in_session(&other), "").await.status, 404);

    // A tool on A asks the client for its roots; the answer is posted to B, which forwards
    // it to A through the session store.
    let asker = open_with(a, json!({"roots": {}})).await;
    let ask = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "count_roots", "arguments": {}}});
    let mut asking = SseStream::open(a, "POST", &in_session(&asker), &ask.to_string()).await;
    let request = asking.next_json().await;
    assert_eq!(request["method"], "roots/list");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b"}]}});
    assert_eq!(post(b, &asker, answer).await.status, 202);
    let done = asking.next_json().await;
    assert_eq!(done["id"], 10);
    assert_eq!(done["result"]["content"][0]["text"], "2 roots");

    // A shuts down; B goes on serving the first session, replays included.
    let _ = stop_a.send(());
    tokio::time::timeout(Duration::from_secs(10), a_task)
        .await
        .expect("A stops")
        .unwrap();
    assert!(tokio::net::TcpStream::connect(("127.0.0.1", a))
        .await
        .is_err());
    assert_eq!(text(&call(b, &sid, 8, "steps").await), "all steps done");
    let again = resume(b, &sid, &ids[2]).await;
    assert_eq!(event_ids(&again.body), ids[3..].to_vec());
    drop(stream);
    let _ = stop_b.send(());
}

/// Unused past the idle timeout, a session is gone on both replicas.
async fn expires_on_both(config: impl Fn() -> HttpConfig) {
    let idle = |mut c: HttpConfig| {
        c.session_idle_timeout = Duration::from_millis(1200);
        c
    };
    let (a, stop_a, _a_task, _) = replica(idle(config())).await;
    let (b, stop_b, _b_task, _) = replica(idle(config())).await;
    let sid = open(a).await;
    assert_eq!(call(b, &sid, 1, "whoami").await.status, 200);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(call(a, &sid, 2, "whoami").await.status, 404);
    assert_eq!(call(b, &sid, 3, "whoami").await.status, 404);
    let _ = (stop_a.send(()), stop_b.send(()));
}

/// The log notifications in an answer.
fn logs(reply: &Reply) -> usize {
    reply
        .events()
        .iter()
        .filter(|e| e["method"] == "notifications/message")
        .count()
}

/// A session B rebuilt, then changed on A: B serves A's change from then on, and a change B
/// saves afterwards does not undo A's in the store (a third replica rebuilding it sees both).
async fn changes_reach_the_replica_that_rebuilt(config: impl Fn() -> HttpConfig) {
    let (a, stop_a, _a_task, _) = replica(config()).await;
    let (b, stop_b, _b_task, b_handle) = replica(config()).await;
    let sid = open(a).await;
    // B rebuilds the session: no level set, so both error logs of `steps` are sent.
    let reply = call(b, &sid, 1, "steps").await;
    assert_eq!(logs(&reply), 2, "{}", reply.body);

    // A raises the level past `error`: B no longer sends those logs.
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
        "params": {"level": "critical"}});
    assert_eq!(post(a, &sid, level).await.message()["result"], json!({}));
    let reply = call(b, &sid, 3, "steps").await;
    assert_eq!(text(&reply), "all steps done");
    assert_eq!(logs(&reply), 0, "B logs at A's level: {}", reply.body);
    assert_eq!(
        text(&call(b, &sid, 4, "whoami").await),
        "t Some(Critical) Some(\"2025-11-25\")"
    );

    // B changes the session (a subscription) and saves it: A's level stays in the store.
    let subscribe = json!({"jsonrpc": "2.0", "id": 5, "method": "resources/subscribe",
        "params": {"uri": "shop://stock"}});
    assert_eq!(
        post(b, &sid, subscribe).await.message()["result"],
        json!({})
    );
    let (c, stop_c, _c_task, c_handle) = replica(config()).await;
    assert_eq!(
        text(&call(c, &sid, 6, "whoami").await),
        "t Some(Critical) Some(\"2025-11-25\")",
        "the store kept A's level through B's save"
    );
    // ...with B's subscription, which C honours.
    let mut stream = SseStream::open(c, "GET", &in_session(&sid), "").await;
    assert_eq!(stream.status, 200);
    c_handle
        .publish(Event::ResourceUpdated {
            uri: "shop://stock".into(),
        })
        .unwrap();
    let updated = stream.next_json().await;
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "shop://stock");
    // A, which holds its own copy, takes B's change too: its next save keeps it.
    let level = json!({"jsonrpc": "2.0", "id": 7, "method": "logging/setLevel",
        "params": {"level": "alert"}});
    assert_eq!(post(a, &sid, level).await.message()["result"], json!({}));
    let (d, stop_d, _d_task, d_handle) = replica(config()).await;
    assert_eq!(
        text(&call(d, &sid, 8, "whoami").await),
        "t Some(Alert) Some(\"2025-11-25\")"
    );
    drop(stream);
    let mut stream = SseStream::open(d, "GET", &in_session(&sid), "").await;
    assert_eq!(stream.status, 200);
    d_handle
        .publish(Event::ResourceUpdated {
            uri: "shop://stock".into(),
        })
        .unwrap();
    let updated = stream.next_json().await;
    assert_eq!(
        updated["params"]["uri"], "shop://stock",
        "A's save kept B's subscription"
    );
    drop(stream);

    // A changes the subscriptions B already holds: B delivers what A subscribed to, and no
    // longer what A unsubscribed from.
    for (id, method, uri) in [
        (9, "resources/subscribe", "shop://prices"),
        (10, "resources/unsubscribe", "shop://stock"),
    ] {
        let change = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"uri": uri}});
        assert_eq!(post(a, &sid, change).await.message()["result"], json!({}));
    }
    let mut stream = SseStream::open(b, "GET", &in_session(&sid), "").await;
    assert_eq!(stream.status, 200);
    for uri in ["shop://stock", "shop://prices"] {
        b_handle
            .publish(Event::ResourceUpdated { uri: uri.into() })
            .unwrap();
    }
    let updated = stream.next_json().await;
    assert_eq!(
        updated["params"]["uri"], "shop://prices",
        "B follows A's subscriptions: {updated}"
    );
    drop(stream);
    let _ = (
        stop_a.send(()),
        stop_b.send(()),
        stop_c.send(()),
        stop_d.send(()),
    );
}

/// How often an open GET stream refreshes its session from the store in these tests.
const REFRESH: Duration = Duration::from_millis(200);

/// A GET stream held open on B learns of a subscription made through A while no request
/// reaches B: B refreshes the session from the store while the stream is open.
async fn an_open_get_stream_follows_the_store(config: impl Fn() -> HttpConfig) {
    let refreshing = || {
        let mut c = config();
        c.session_refresh = REFRESH;
        c
    };
    let (a, stop_a, _a_task, _) = replica(refreshing()).await;
    let (b, stop_b, _b_task, b_handle) = replica(refreshing()).await;
    let sid = open(a).await;
    let mut stream = SseStream::open(b, "GET", &in_session(&sid), "").await;
    assert_eq!(stream.status, 200);

    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
        "params": {"uri": "shop://stock"}});
    assert_eq!(
        post(a, &sid, subscribe).await.message()["result"],
        json!({})
    );
    tokio::time::sleep(REFRESH * 4).await;
    b_handle
        .publish(Event::ResourceUpdated {
            uri: "shop://stock".into(),
        })
        .unwrap();
    // A notification B sends anyway: the update, when delivered, comes before it.
    b_handle.add_tool(HelloTool).unwrap();
    let first = stream.next_json().await;
    assert_eq!(
        first["method"], "notifications/resources/updated",
        "B learnt of A's subscription: {first}"
    );
    assert_eq!(first["params"]["uri"], "shop://stock");
    assert_eq!(
        stream.next_json().await["method"],
        "notifications/tools/list_changed"
    );

    drop(stream);
    let _ = (stop_a.send(()), stop_b.send(()));
}

fn memory_stores() -> impl Fn() -> HttpConfig {
    let sessions = MemorySessionStore::default();
    let events = MemoryEventStore::default();
    move || {
        HttpConfig::default()
            .session_store(sessions.clone())
            .event_store(events.clone())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stores_serve_a_session_on_either_replica() {
    served_by_either_replica(memory_stores()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stores_expire_a_session_on_both_replicas() {
    expires_on_both(memory_stores()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stores_carry_a_change_to_the_replica_that_rebuilt() {
    changes_reach_the_replica_that_rebuilt(memory_stores()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stores_refresh_a_session_while_its_get_stream_is_open() {
    an_open_get_stream_follows_the_store(memory_stores()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_stores_a_session_stays_on_its_replica() {
    let (a, stop_a, _a_task, _) = replica(HttpConfig::default()).await;
    let (b, stop_b, _b_task, _) = replica(HttpConfig::default()).await;
    let sid = open(a).await;
    assert_eq!(call(a, &sid, 1, "whoami").await.status, 200);
    assert_eq!(call(b, &sid, 2, "whoami").await.status, 404);
    let _ = (stop_a.send(()), stop_b.send(()));
}

/// Stores under a prefix of their own, so tests sharing one Redis do not meet.
async fn redis_stores(url: &str, test: &str) -> impl Fn() -> HttpConfig {
    let store = RedisStore::connect(url)
        .await
        .expect("Redis is reachable")
        .prefix(format!("mcp-test:{test}:{}", std::process::id()));
    move || {
        HttpConfig::default()
            .session_store(store.clone())
            .event_store(store.clone())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stores_serve_a_session_on_either_replica() {
    let Some((url, _own)) = redis() else { return };
    served_by_either_replica(redis_stores(&url, "either").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stores_expire_a_session_on_both_replicas() {
    let Some((url, _own)) = redis() else { return };
    expires_on_both(redis_stores(&url, "expiry").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stores_carry_a_change_to_the_replica_that_rebuilt() {
    let Some((url, _own)) = redis() else { return };
    changes_reach_the_replica_that_rebuilt(redis_stores(&url, "changes").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stores_refresh_a_session_while_its_get_stream_is_open() {
    let Some((url, _own)) = redis() else { return };
    an_open_get_stream_follows_the_store(redis_stores(&url, "refresh").await).await;
}
