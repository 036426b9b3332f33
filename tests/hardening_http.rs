//! Hostile HTTP clients against a child server process (`examples/http_limits.rs`) with small
//! limits: every attack gets its exact status and JSON-RPC code, the server's peak memory
//! (`VmHWM`) stays within a stated bound, and a normal call is still served afterwards.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};
use tokio::process::{Child, Command};

mod support;

use support::raw_http::{send, Reply};
use support::sse::SseStream;

const V2026: &str = "2026-07-28";

/// The example server, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    async fn start(env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(support::example("http_limits"));
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("the example starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .await
            .expect("the address");
        let port = line
            .trim()
            .trim_end_matches("/mcp")
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port");
        Self { child, port }
    }

    /// Peak resident memory so far, in KiB.
    fn peak_kib(&self) -> u64 {
        let pid = self.child.id().expect("running");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
        status
            .lines()
            .find(|l| l.starts_with("VmHWM"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .expect("VmHWM")
    }

    /// A normal 2026 call still works.
    async fn still_serves(&self) {
        let reply = call_2026(self.port, 900, "hello", json!({}), &[]).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(
            reply.message()["result"]["content"][0]["text"],
            json!("hello"),
            "{}",
            reply.body
        );
    }
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": V2026, "io.modelcontextprotocol/clientCapabilities": {}})
}

/// A 2026 `tools/call` of `name` with its headers (and `extra` ones).
async fn call_2026(
    port: u16,
    id: i64,
    name: &str,
    arguments: Value,
    extra: &[(&str, &str)],
) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta()}})
    .to_string();
    let mut headers = vec![
        ("MCP-Protocol-Version", V2026),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    headers.extend_from_slice(extra);
    send(port, "POST", &headers, &body).await
}

/// Opens a 2025 session; its id.
async fn open_session(port: u16) -> String {
    let reply = send(port, "POST", &[], &initialize()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply
        .header("mcp-session-id")
        .expect("a session")
        .to_owned()
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string()
}

/// A 2025 `tools/call` in `session`.
fn call_2025(id: i64, name: &str, arguments: Value, token: Option<&str>) -> String {
    let mut params = json!({"name": name, "arguments": arguments});
    if let Some(token) = token {
        params["_meta"] = json!({"progressToken": token});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// `reply` is the answer of the `hello` tool.
fn assert_hello(reply: &Reply) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.message()["result"]["content"][0]["text"],
        json!("hello")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_request_naming_a_session_is_served_as_2026_and_a_session_keeps_its_era() {
    let server = Server::start(&[]).await;
    let port = server.port;
    let sid = open_session(port).await;
    // 2026 headers and envelope: served by the 2026 transport, which ignores Mcp-Session-Id.
    let reply = call_2026(port, 2, "hello", json!({}), &[("Mcp-Session-Id", &sid)]).await;
    assert_hello(&reply);
    // 2026 checks apply to it: a lying Mcp-Name is -32020.
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "hello", "arguments": {}, "_meta": meta()}})
    .to_string();
    let headers = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", V2026),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "other"),
    ];
    let reply = send(port, "POST", &headers, &body).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], json!(-32020));
    // Inside the session, a 2026 version header on a 2025 body is refused: one session, one era.
    let headers = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", V2026),
    ];
    let reply = send(
        port,
        "POST",
        &headers,
        &call_2025(4, "hello", json!({}), None),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], json!(-32600));
    // The session still works with its own era.
    let headers = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let reply = send(
        port,
        "POST",
        &headers,
        &call_2025(5, "hello", json!({}), None),
    )
    .await;
    assert_hello(&reply);
    server.still_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_accepts_only_json_gets_json_even_when_the_handler_sends_progress() {
    let server = Server::start(&[]).await;
    let port = server.port;
    let json_only = ("Accept", "application/json");
    // 2026: the progress token is in `_meta`.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "progress", "arguments": {},
                   "_meta": {"progressToken": "p", "io.modelcontextprotocol/protocolVersion": V2026,
                             "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let headers = [
        json_only,
        ("MCP-Protocol-Version", V2026),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "progress"),
    ];
    let reply = send(port, "POST", &headers, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json()["result"]["content"][0]["text"], json!("done"));
    // 2025, in a session.
    let sid = open_session(port).await;
    let headers = [json_only, ("Mcp-Session-Id", sid.as_str())];
    let reply = send(
        port,
        "POST",
        &headers,
        &call_2025(3, "progress", json!({}), Some("p")),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json()["result"]["content"][0]["text"], json!("done"));
    // A client that takes SSE still gets the progress.
    let headers = [("Mcp-Session-Id", sid.as_str())];
    let reply = send(
        port,
        "POST",
        &headers,
        &call_2025(4, "progress", json!({}), Some("p")),
    )
    .await;
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert_eq!(reply.events().len(), 4, "{}", reply.body);
    server.still_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_texts_quote_at_most_a_few_hundred_bytes_of_an_input() {
    let server = Server::start(&[]).await;
    let port = server.port;
    let name = "n".repeat(3 * 1024 * 1024);
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": name, "arguments": {}, "_meta": meta()}})
    .to_string();
    let headers = [
        ("MCP-Protocol-Version", V2026),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "short"),
    ];
    let reply = send(port, "POST", &headers, &body).await;
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.json()["error"]["code"],
        json!(-32020),
        "{}",
        &reply.body[..200.min(reply.body.len())]
    );
    assert!(reply.body.len() < 1024, "{} bytes echoed", reply.body.len());
    assert!(reply.body.contains("(3145728 bytes)"), "{}", reply.body);
    server.still_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_store_is_bounded_in_bytes_and_a_replay_of_dropped_events_is_410() {
    // 1 MiB progress tokens: every 2025 progress event is over 1 MiB.
    let server = Server::start(&[
        ("LIMITS_STORE_SESSION_BYTES", "2500000"),
        ("LIMITS_STORE_TOTAL_BYTES", "4000000"),
    ])
    .await;
    let port = server.port;
    let token = "t".repeat(1024 * 1024);
    let mut first_stream = None;
    let mut last = None;
    for _ in 0..3 {
        let sid = open_session(port).await;
        for id in 0..12 {
            let headers = [("Mcp-Session-Id", sid.as_str())];
            let body = call_2025(10 + id, "progress", json!({}), Some(&token));
            let reply = send(port, "POST", &headers, &body).await;
            assert_eq!(reply.status, 200);
            assert_eq!(reply.events().len(), 4);
            let ids: Vec<&str> = reply
                .body
                .lines()
                .filter_map(|l| l.strip_prefix("id: "))
                .collect();
            if first_stream.is_none() {
                first_stream = Some((sid.clone(), ids[1].to_owned()));
            }
            last = Some((sid.clone(), ids[ids.len() - 2].to_owned()));
        }
    }
    // Unbounded, this held 3 x 12 x 4 events of 1 MiB (144 MiB) until the sessions ended.
    let peak = server.peak_kib();
    eprintln!("event store: 36 streams of 4 events of 1 MiB, server peak {peak} KiB");
    assert!(peak < 64 * 1024, "peak {peak} KiB");
    // The first stream's events were dropped: the client is told it lost them.
    let (sid, event) = first_stream.expect("a stream");
    let headers = [
        ("Mcp-Session-Id", sid.as_str()),
        ("Last-Event-ID", event.as_str()),
    ];
    let reply = send(port, "GET", &headers, "").await;
    assert_eq!(reply.status, 410, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], json!(-32600));
    // The last stream's final event is still there.
    let (sid, event) = last.expect("a stream");
    let headers = [
        ("Mcp-Session-Id", sid.as_str()),
        ("Last-Event-ID", event.as_str()),
    ];
    let reply = send(port, "GET", &headers, "").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.events().pop().expect("the answer")["result"]["content"][0]["text"],
        json!("done")
    );
    // One naming a stream never opened is refused (and the session is not said to be gone).
    let headers = [
        ("Mcp-Session-Id", sid.as_str()),
        ("Last-Event-ID", "999999-1"),
    ];
    let reply = send(port, "GET", &headers, "").await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], json!(-32600));
    // A Last-Event-ID that is not ASCII does not open the standalone stream.
    let headers = [("Mcp-Session-Id", sid.as_str()), ("Last-Event-ID", "0-1é")];
    let reply = send(port, "GET", &headers, "").await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], json!(-32600));
    server.still_serves().await;
}

/// `POST /mcp` with `body` from the local address `from`.
async fn send_from(
    from: &str,
    port: u16,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Value, Option<String>) {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut stream = socket
        .connect(format!("127.0.0.1:{port}").parse().unwrap())
        .await
        .unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = String::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_string(&mut raw))
        .await
        .unwrap()
        .unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let session = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("mcp-session-id")
            .then(|| v.trim().to_owned())
    });
    (
        status,
        serde_json::from_str(body).unwrap_or(Value::Null),
        session,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_peer_cannot_take_every_session() {
    // The default share: an eighth of the sessions (2 of 16).
    let server = Server::start(&[("LIMITS_MAX_SESSIONS", "16")]).await;
    let port = server.port;
    let mut mine = Vec::new();
    for _ in 0..2 {
        let (status, _, sid) = send_from("127.0.0.1", port, &[], &initialize()).await;
        assert_eq!(status, 200);
        mine.push(sid.expect("a session"));
    }
    for _ in 0..5 {
        let (status, body, sid) = send_from("127.0.0.1", port, &[], &initialize()).await;
        assert_eq!(status, 503);
        assert_eq!(body["error"]["code"], json!(-32603));
        assert!(sid.is_none());
    }
    // Another peer still gets its share.
    let (status, _, sid) = send_from("127.0.0.2", port, &[], &initialize()).await;
    assert_eq!(status, 200);
    assert!(sid.is_some());
    // Ending a session gives the share back.
    let reply = send(port, "DELETE", &[("Mcp-Session-Id", &mine[0])], "").await;
    assert_eq!(reply.status, 200);
    let (status, _, _) = send_from("127.0.0.1", port, &[], &initialize()).await;
    assert_eq!(status, 200);
    server.still_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_in_flight_per_session_wait_for_a_slot_and_ids_are_not_reused() {
    let server = Server::start(&[("LIMITS_MAX_IN_FLIGHT", "4")]).await;
    let port = server.port;
    let sid = open_session(port).await;
    let headers = [("Mcp-Session-Id", sid.as_str())];
    // Fire and forget: each `hang` is running once its stream has started; the client leaves.
    for id in 1..=4 {
        let open = SseStream::open(
            port,
            "POST",
            &headers,
            &call_2025(id, "hang", json!({}), Some("h")),
        )
        .await;
        assert_eq!(open.status, 200);
    }
    // Over the cap a request waits for a slot (as stdio stops reading), it does not run.
    let sid5 = sid.clone();
    let mut fifth = tokio::spawn(async move {
        let headers = [("Mcp-Session-Id", sid5.as_str())];
        send(
            port,
            "POST",
            &headers,
            &call_2025(5, "hello", json!({}), None),
        )
        .await
    });
    assert!(
        tokio::time::timeout(Duration::from_millis(500), &mut fifth)
            .await
            .is_err(),
        "served past the in-flight cap"
    );
    // Cancelling one frees a slot: the waiting request runs.
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
            .to_string();
    assert_eq!(send(port, "POST", &headers, &cancel).await.status, 202);
    let reply = fifth.await.unwrap();
    assert_hello(&reply);
    // A request reusing a running id is refused at once.
    let reply = send(
        port,
        "POST",
        &headers,
        &call_2025(2, "hello", json!({}), None),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], json!(-32600));
    let reply = send(
        port,
        "POST",
        &headers,
        &call_2025(6, "hello", json!({}), None),
    )
    .await;
    assert_hello(&reply);
    server.still_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_stalls_is_cut_off_and_holds_little() {
    let server = Server::start(&[
        ("LIMITS_STREAM_BUFFER_BYTES", "65536"),
        ("LIMITS_WRITE_TIMEOUT_MS", "1000"),
    ])
    .await;
    let port = server.port;
    // 400 progress notifications of 512 KiB (200 MiB) to a client that reads only the head.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "stream", "arguments": {"count": 400, "size": 512 * 1024},
                   "_meta": {"progressToken": 1, "io.modelcontextprotocol/protocolVersion": V2026,
                             "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let headers = [
        ("MCP-Protocol-Version", V2026),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "stream"),
    ];
    let (status, mut stalled) = open_head(port, &headers, &body).await;
    assert_eq!(status, 200);
    // Read nothing for well past the write timeout, then everything: the stream was cut.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the connection was closed");
    assert!(
        rest.len() < 100 * 1024 * 1024,
        "{} bytes: the stream was not cut",
        rest.len()
    );
    let peak = server.peak_kib();
    eprintln!(
        "stalled reader: {} bytes delivered of 200 MiB, server peak {peak} KiB",
        rest.len()
    );
    assert!(peak < 48 * 1024, "peak {peak} KiB");
    server.still_serves().await;
}

/// Sends a POST and reads only its status line and headers.
async fn open_head(port: u16, headers: &[(&str, &str)], body: &str) -> (u16, TcpStream) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut byte))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, 1, "a response head");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, stream)
}

/// Opens `n` connections that send one byte of a request head and stall.
async fn trickle(port: u16, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..n {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.write_all(b"P").await.unwrap();
        held.push(stream);
    }
    held
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_time_out_and_connections_are_capped() {
    let server = Server::start(&[
        ("LIMITS_HEADER_TIMEOUT_MS", "1000"),
        ("LIMITS_MAX_CONNECTIONS", "4"),
        ("LIMITS_CONNECTIONS_PER_CLIENT", "4"),
    ])
    .await;
    let port = server.port;
    let mut held = trickle(port, 4).await;
    // At the cap, a fifth client waits (in the backlog) until a slot frees: the trickling
    // ones are closed after the header-read timeout, and then it is served.
    let waiting = tokio::spawn(async move { call_2026(port, 3, "hello", json!({}), &[]).await });
    for stream in &mut held {
        let mut byte = [0u8; 1];
        let closed = tokio::time::timeout(Duration::from_secs(8), stream.read(&mut byte)).await;
        assert!(
            matches!(closed, Ok(Ok(0)) | Ok(Err(_))),
            "a connection sending no header is closed: {closed:?}"
        );
    }
    let reply = waiting.await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.body);
    server.still_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_connection_cap_nothing_more_is_served_until_one_closes() {
    let server = Server::start(&[
        ("LIMITS_MAX_CONNECTIONS", "2"),
        ("LIMITS_CONNECTIONS_PER_CLIENT", "2"),
    ])
    .await;
    let port = server.port;
    let held = trickle(port, 2).await;
    let mut waiting =
        tokio::spawn(async move { call_2026(port, 3, "hello", json!({}), &[]).await });
    assert!(
        tokio::time::timeout(Duration::from_millis(500), &mut waiting)
            .await
            .is_err(),
        "served past the connection cap"
    );
    drop(held);
    let reply = waiting.await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.body);
    server.still_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_hold_every_connection() {
    // A cap of 8 connections, 2 per client: 127.0.0.1 holds two, its third is closed at once,
    // and another client (127.0.0.2) is still served.
    let server = Server::start(&[
        ("LIMITS_MAX_CONNECTIONS", "8"),
        ("LIMITS_CONNECTIONS_PER_CLIENT", "2"),
    ])
    .await;
    let port = server.port;
    let held = trickle(port, 2).await;
    let mut third = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(5), third.read(&mut buf))
        .await
        .expect("the third connection is closed, not left waiting");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    let (status, _, _) = send_from("127.0.0.2", port, &[], &initialize()).await;
    assert_eq!(status, 200);
    // Once its connections close, the client is served again (the server notices the closes
    // when it next reads them).
    drop(held);
    drop(third);
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.still_serves().await;
}
