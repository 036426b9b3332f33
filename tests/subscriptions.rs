//! Subscriptions in both eras through one publishing API, over Streamable HTTP on 127.0.0.1:
//! 2025 `resources/subscribe` + list-changed to every session, 2026 `subscriptions/listen`
//! filtered by kind and exact URI, events published from handlers and from outside, and listen
//! streams ended gracefully.

mod support;

use std::time::Duration;

use modelctx::events::Event;
use modelctx::prelude::*;
use serde_json::{json, Value};
use support::modern;
use support::sse::{call_tool, modern_post, open_session, serve, session_call, SseStream};

/// The shop's about page.
#[resource("shop://about")]
async fn about() -> String {
    "about".into()
}

/// Restocks the shop: the stock page changed.
#[tool]
async fn restock(ctx: RequestContext) -> modelctx::Result<String> {
    ctx.publish(Event::ResourceUpdated {
        uri: "shop://stock".into(),
    })?;
    Ok("restocked".into())
}

fn server() -> McpServer {
    McpServer::new("shop")
        .resource(AboutResource)
        .tool(RestockTool)
}

const QUIET: Duration = Duration::from_millis(300);

async fn listen(port: u16, filter: Value) -> (SseStream, Value) {
    let mut stream = modern_post(
        port,
        &modern(7, "subscriptions/listen", json!({"notifications": filter})),
    )
    .await;
    assert_eq!(stream.status, 200, "{}", stream.head);
    let ack = stream.next_json().await;
    (stream, ack)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_listener_hears_exactly_the_uris_and_kinds_it_asked_for() {
    let server = server();
    let handle = server.handle();
    let (port, stop) = serve(server).await;
    let (mut stream, ack) = listen(
        port,
        json!({"resourceSubscriptions": ["shop://stock"], "promptsListChanged": true}),
    )
    .await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true, "resourceSubscriptions": ["shop://stock"]})
    );
    handle.resource_updated("shop://stock/old").unwrap();
    handle.resource_updated("shop://about").unwrap();
    handle.publish(Event::ToolsChanged).unwrap();
    handle.resource_updated("shop://stock").unwrap();
    let note = stream.next_json().await;
    assert_eq!(note["method"], "notifications/resources/updated");
    assert_eq!(note["params"]["uri"], "shop://stock");
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    handle.publish(Event::PromptsChanged).unwrap();
    assert_eq!(
        stream.next_json().await["method"],
        "notifications/prompts/list_changed"
    );
    assert_eq!(stream.next_json_within(QUIET).await, None, "nothing else");

    // The server ends the stream: the final result, tagged with the subscription.
    handle.close_subscriptions();
    let end = stream.next_json().await;
    assert_eq!(end["id"], 7);
    assert_eq!(end["result"]["resultType"], "complete");
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_publish_reaches_subscribers_of_both_eras() {
    let (port, stop) = serve(server()).await;
    // 2025: two sessions, one subscribed to shop://stock; both listen on their GET stream.
    let subscribed = open_session(port, json!({})).await;
    let other = open_session(port, json!({})).await;
    let reply = session_call(
        port,
        &subscribed,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "shop://stock"}}),
    )
    .await;
    assert_eq!(reply["result"], json!({}));
    let get = |sid: String| async move {
        let headers = [
            ("Mcp-Session-Id", sid.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        SseStream::open(port, "GET", &headers, "").await
    };
    let mut subscribed_stream = get(subscribed.clone()).await;
    let mut other_stream = get(other.clone()).await;
    assert_eq!(subscribed_stream.status, 200);
    // 2026: a listener for the same URI.
    let (mut listener, _) = listen(port, json!({"resourceSubscriptions": ["shop://stock"]})).await;

    // A 2026 tools/call whose handler publishes.
    let call = call_tool(port, 2, "restock").await;
    assert_eq!(call["result"]["content"][0]["text"], "restocked");

    let heard = subscribed_stream.next_json().await;
    assert_eq!(heard["method"], "notifications/resources/updated");
    assert_eq!(heard["params"], json!({"uri": "shop://stock"}));
    let heard = listener.next_json().await;
    assert_eq!(heard["params"]["uri"], "shop://stock");
    assert_eq!(
        other_stream.next_json_within(QUIET).await,
        None,
        "not subscribed"
    );

    // Unsubscribed: no more updates for that session.
    let reply = session_call(
        port,
        &subscribed,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "resources/unsubscribe", "params": {"uri": "shop://stock"}}),
    )
    .await;
    assert_eq!(reply["result"], json!({}));
    let again = call_tool(port, 4, "restock").await;
    assert_eq!(again["result"]["content"][0]["text"], "restocked");
    // The 2026 listener still hears it (so the event was published), the session does not.
    assert_eq!(listener.next_json().await["params"]["uri"], "shop://stock");
    assert_eq!(
        subscribed_stream.next_json_within(QUIET).await,
        None,
        "unsubscribed"
    );
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_reach_every_2025_session() {
    let server = server();
    let handle = server.handle();
    let (port, stop) = serve(server).await;
    let mut streams = Vec::new();
    for _ in 0..2 {
        let sid = open_session(port, json!({})).await;
        let headers = [
            ("Mcp-Session-Id", sid.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        streams.push(SseStream::open(port, "GET", &headers, "").await);
    }
    handle.remove_resource("shop://about");
    for stream in &mut streams {
        assert_eq!(
            stream.next_json().await["method"],
            "notifications/resources/list_changed"
        );
    }
    let _ = stop.send(());
}
