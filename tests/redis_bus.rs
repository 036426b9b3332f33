//! Subscriptions that scale out: two server instances share a Redis event bus, and a listener
//! on one hears a change published on the other, in both eras, over Streamable HTTP.
//!
//! Needs Redis, found as `tests/support/redis.rs` says: `.ci/run` starts `redis-server` on
//! 127.0.0.1 and sets `MCP_TEST_REDIS_URL` and `MCP_TEST_REQUIRE_REDIS=1`; without the URL each
//! test starts its own `redis-server` from `PATH` (the restart test always does). With neither,
//! the tests that need it skip with a notice on stderr (a failure under
//! `MCP_TEST_REQUIRE_REDIS=1`): `apt-get install redis-server`.

mod support;

use std::time::Duration;

use modelctx::events::{Event, EventBus, RedisBus};
use modelctx::prelude::*;
use serde_json::json;
use support::modern;
use support::redis::{own_redis, redis, OwnRedis};
use support::sse::{call_tool, modern_post, open_session, serve, session_call, SseStream};

/// A channel of its own per test, so tests sharing one Redis do not hear each other.
fn channel(test: &str) -> String {
    format!("mcp-test:{test}:{}", std::process::id())
}

/// Restocks: publishes that the stock page changed.
#[tool]
async fn restock(ctx: RequestContext) -> modelctx::Result<String> {
    ctx.publish(Event::ResourceUpdated {
        uri: "shop://stock".into(),
    })?;
    Ok("restocked".into())
}

/// Says hello.
#[tool]
async fn hello() -> String {
    "hello".into()
}

async fn replica(url: &str, channel: &str) -> McpServer {
    let bus = RedisBus::connect_channel(url, channel)
        .await
        .expect("Redis is reachable");
    McpServer::new("replica").tool(RestockTool).event_bus(bus)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_one_replica_hears_changes_published_on_the_other() {
    let Some((url, _own)) = redis() else { return };
    let channel = channel("two-replicas");
    let a = replica(&url, &channel).await;
    let a_handle = a.handle();
    let b = replica(&url, &channel).await;
    let (a_port, stop_a) = serve(a).await;
    let (b_port, stop_b) = serve(b).await;

    // On B: a 2026 listener and a 2025 session subscribed to shop://stock.
    let listen = modern(
        9,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["shop://stock"]}}),
    );
    let mut listener = modern_post(b_port, &listen).await;
    assert_eq!(
        listener.next_json().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    let sid = open_session(b_port, json!({})).await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "shop://stock"}});
    assert_eq!(
        session_call(b_port, &sid, &subscribe).await["result"],
        json!({})
    );
    let headers = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let mut session_stream = SseStream::open(b_port, "GET", &headers, "").await;
    assert_eq!(session_stream.status, 200);

    // On A: a tool is added (outside any request)...
    a_handle.add_tool(HelloTool).unwrap();
    let heard = listener.next_json().await;
    assert_eq!(heard["method"], "notifications/tools/list_changed");
    assert_eq!(
        heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        9
    );
    assert_eq!(
        session_stream.next_json().await["method"],
        "notifications/tools/list_changed"
    );

    // ...and a handler publishes a resource update (inside a 2026 request).
    let call = call_tool(a_port, 2, "restock").await;
    assert_eq!(call["result"]["content"][0]["text"], "restocked");
    let heard = listener.next_json().await;
    assert_eq!(heard["method"], "notifications/resources/updated");
    assert_eq!(heard["params"]["uri"], "shop://stock");
    let heard = session_stream.next_json().await;
    assert_eq!(heard["method"], "notifications/resources/updated");
    assert_eq!(heard["params"]["uri"], "shop://stock");
    let _ = (stop_a.send(()), stop_b.send(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bus_survives_a_redis_restart() {
    // Its own Redis, to restart it.
    let Some(own) = own_redis() else { return };
    let (url, port) = (own.url(), own.port());
    let channel = channel("restart");
    let publisher = RedisBus::connect_channel(&url, &channel).await.unwrap();
    let subscriber = RedisBus::connect_channel(&url, &channel).await.unwrap();
    let mut rx = subscriber.subscribe();
    publisher.publish(Event::PromptsChanged).unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first, Event::PromptsChanged);

    drop(own);
    let _again = OwnRedis::start_on(port);
    // After reconnecting, the subscriber announces every list as changed (it may have missed
    // events), and new events flow again.
    let uri = "shop://after-restart".to_owned();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut saw_update = false;
    let mut saw_resync = false;
    while tokio::time::Instant::now() < deadline && !saw_update {
        publisher
            .publish(Event::ResourceUpdated { uri: uri.clone() })
            .unwrap();
        while let Ok(Ok(event)) = tokio::time::timeout(Duration::from_millis(300), rx.recv()).await
        {
            match event {
                Event::ResourceUpdated { uri: u } if u == uri => saw_update = true,
                Event::ToolsChanged => saw_resync = true,
                _ => {}
            }
        }
    }
    assert!(saw_update, "events flow again after Redis came back");
    assert!(saw_resync, "the subscriber resynchronised its listeners");
}

#[tokio::test]
async fn connecting_to_no_redis_is_a_clear_error() {
    // Port 1 (tcpmux) has no listener on any machine this runs on; a port freed by binding
    // and dropping could be taken by a redis-server another test of this file starts.
    let port = 1;
    let err = RedisBus::connect(&format!("redis://127.0.0.1:{port}"))
        .await
        .unwrap_err();
    assert!(
        err.message()
            .starts_with(&format!("cannot reach Redis at 127.0.0.1:{port}")),
        "{err}"
    );
}
