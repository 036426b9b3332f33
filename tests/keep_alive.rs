//! SSE keep-alive over real HTTP on 127.0.0.1: an idle 2025 GET stream, an idle 2026
//! `subscriptions/listen` stream and a 2025 POST stream that goes quiet get `: keep-alive`
//! comment lines; `HttpConfig::keep_alive(None)` sends none; a comment carries no id and is
//! never replayed.

mod support;

use std::time::Duration;

use modelctx::prelude::*;
use modelctx::transport::HttpConfig;
use serde_json::{json, Value};
use support::modern;
use support::sse::open_session;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const COMMENT: &str = ": keep-alive\n\n";
const EVERY: Duration = Duration::from_millis(100);

/// Says it is working, goes quiet for `ms`, then answers.
#[tool]
async fn slow(ctx: RequestContext, ms: u64) -> modelctx::Result<String> {
    ctx.notify(
        "notifications/message",
        json!({"level": "info", "data": "working"}),
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok("done".into())
}

async fn serve(keep_alive: Option<Duration>) -> (u16, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = McpServer::new("keep-alive").tool(SlowTool);
    tokio::spawn(async move {
        let config = HttpConfig::default().keep_alive(keep_alive);
        let _ = server
            .serve_http_on(listener, config, async move {
                let _ = stopped.await;
            })
            .await;
    });
    (port, stop)
}

/// Sends one request and returns every byte of the answer (head and body) that arrives
/// within `window`, or until the server closes the connection.
async fn raw(
    port: u16,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
    window: Duration,
) -> String {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, \
         text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + window;
    let mut chunk = [0u8; 8192];
    loop {
        let read = tokio::time::timeout_at(deadline, tcp.read(&mut chunk)).await;
        match read {
            Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

fn session_headers(sid: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

/// The SSE events (blocks separated by a blank line) of a chunked body, with chunk-size lines
/// dropped: each event's `id:` (if any) and `data:` JSON (if any).
fn events(answer: &str) -> Vec<(Option<String>, Option<Value>)> {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let lines: Vec<&str> = body
        .split('\n')
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.chars().all(|c| c.is_ascii_hexdigit()) || l.is_empty())
        .collect();
    let mut out = Vec::new();
    let (mut id, mut data) = (None, None);
    for line in lines {
        if let Some(v) = line.strip_prefix("id:") {
            id = Some(v.trim().to_owned());
        } else if let Some(v) = line.strip_prefix("data:") {
            data = serde_json::from_str(v.trim()).ok();
        } else if line.is_empty() && (id.is_some() || data.is_some()) {
            out.push((id.take(), data.take()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_2025_get_stream_gets_comment_lines_without_ids() {
    let (port, _stop) = serve(Some(EVERY)).await;
    let sid = open_session(port, json!({})).await;
    let answer = raw(
        port,
        "GET",
        &session_headers(&sid),
        "",
        Duration::from_millis(800),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let comments = answer.matches(COMMENT).count();
    assert!(comments >= 2, "{comments} comments in {answer:?}");
    // The comment is a frame of its own: no id, no data, no event.
    assert!(!answer.contains(": keep-alive\nid:"), "{answer:?}");
    let ids: Vec<_> = events(&answer)
        .into_iter()
        .filter_map(|(id, _)| id)
        .collect();
    assert_eq!(ids.len(), 1, "only the priming event has an id: {answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_2026_listen_stream_gets_comment_lines() {
    let (port, _stop) = serve(Some(EVERY)).await;
    let body = modern(
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    let answer = raw(
        port,
        "POST",
        &headers,
        &body.to_string(),
        Duration::from_millis(800),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let seen = events(&answer);
    assert_eq!(
        seen[0].1.as_ref().map(|v| v["method"].clone()),
        Some(json!("notifications/subscriptions/acknowledged")),
        "{answer:?}"
    );
    assert_eq!(seen.len(), 1, "comments are no events: {answer:?}");
    let comments = answer.matches(COMMENT).count();
    assert!(comments >= 2, "{comments} comments in {answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_2025_post_stream_gets_comments_that_a_replay_does_not_repeat() {
    let (port, _stop) = serve(Some(EVERY)).await;
    let sid = open_session(port, json!({})).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 500}}});
    let answer = raw(
        port,
        "POST",
        &session_headers(&sid),
        &call.to_string(),
        Duration::from_secs(5),
    )
    .await;
    assert!(answer.contains(COMMENT), "{answer:?}");
    let seen = events(&answer);
    let result = seen
        .last()
        .and_then(|(_, data)| data.clone())
        .expect("an answer");
    assert_eq!(result["result"]["content"][0]["text"], "done", "{answer:?}");
    // Replay everything after the notification: the answer alone, no comment.
    let (note_id, note) = &seen[1];
    assert_eq!(note.as_ref().unwrap()["method"], "notifications/message");
    let note_id = note_id.as_deref().expect("the notification has an id");
    let mut headers = session_headers(&sid).to_vec();
    headers.push(("Last-Event-ID", note_id));
    let replay = raw(port, "GET", &headers, "", Duration::from_secs(2)).await;
    let replayed = events(&replay);
    assert_eq!(replayed.len(), 1, "{replay:?}");
    assert_eq!(replayed[0].1.as_ref(), Some(&result), "{replay:?}");
    assert!(!replay.contains(COMMENT), "{replay:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_none_sends_no_comments() {
    let (port, _stop) = serve(None).await;
    let sid = open_session(port, json!({})).await;
    let answer = raw(
        port,
        "GET",
        &session_headers(&sid),
        "",
        Duration::from_millis(600),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(!answer.contains("keep-alive\n"), "{answer:?}");
}

#[test]
fn the_default_is_fifteen_seconds() {
    assert_eq!(
        HttpConfig::default().keep_alive,
        Some(Duration::from_secs(15))
    );
}
