//! Streamable HTTP over a real socket on 127.0.0.1: both eras at one URL, header checks,
//! statuses, sessions, SSE only when needed, DNS-rebinding protection, body limit, expiry.

use std::time::Duration;

mod support;

use modelctx::prelude::*;
use modelctx::transport::HttpConfig;
use serde_json::{json, Value};
use support::raw_http::{send, send_as};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Count to three, reporting progress.
#[tool]
async fn count(ctx: RequestContext) -> String {
    for i in 1..=3 {
        ctx.progress(i).total(3).await;
    }
    "counted".into()
}

/// Say hello.
#[tool]
async fn hello() -> String {
    "hello".into()
}

/// Close the stream, then answer (SSE polling).
#[tool]
async fn polled(ctx: RequestContext) -> String {
    ctx.close_stream().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    "answered after the stream closed".into()
}

type Stop = tokio::sync::oneshot::Sender<()>;

/// Serves `server` on a free loopback port until the returned sender fires.
async fn serve(server: McpServer, config: HttpConfig) -> (u16, Stop, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = server
            .serve_http_on(listener, config, async move {
                let _ = stopped.await;
            })
            .await;
    });
    (port, stop, task)
}

async fn start(config: HttpConfig) -> (u16, Stop, tokio::task::JoinHandle<()>) {
    let server = McpServer::new("http-test")
        .version("1.0.0")
        .tool(HelloTool)
        .tool(CountTool)
        .tool(PolledTool);
    serve(server, config).await
}

/// A 2025-11-25 `initialize` request.
fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string()
}

/// Opens a 2025 session and returns its id.
async fn open_session(port: u16) -> String {
    send(port, "POST", &[], &initialize_body())
        .await
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

fn modern(id: i64, method: &str, mut params: Value) -> String {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A retry member whose value is `null` is refused over HTTP as in memory: the routing peek
/// must not take the lone `inputResponses: null` (nor an escaped spelling of it) for a request
/// that is no retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_null_input_responses_over_http_is_invalid_params() {
    let (port, stop, task) = start(HttpConfig::default()).await;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "hello"),
    ];
    for (id, member) in [(1, "inputResponses"), (2, "\\u0069nputResponses")] {
        let meta = support::modern_meta().to_string();
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"hello","{member}":null,"_meta":{meta}}}}}"#
        );
        let reply = send(port, "POST", &headers, &body).await;
        assert_eq!(reply.status, 200, "{body}");
        let answer = reply.json();
        assert_eq!(answer["error"]["code"], -32602, "{body}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Invalid inputResponses: expected an object"),
            "{message}"
        );
    }
    let ok = send(
        port,
        "POST",
        &headers,
        &modern(3, "tools/call", json!({"name": "hello"})),
    )
    .await;
    assert_eq!(ok.json()["result"]["content"][0]["text"], "hello");
    let _ = stop.send(());
    task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_2026_wire_checks_headers_and_maps_statuses() {
    let (port, stop, task) = start(HttpConfig::default()).await;
    let v = ("MCP-Protocol-Version", "2026-07-28");

    let ok = send(
        port,
        "POST",
        &[v, ("Mcp-Method", "server/discover")],
        &modern(1, "server/discover", json!({})),
    )
    .await;
    assert_eq!(ok.status, 200);
    assert_eq!(
        ok.header("content-type"),
        Some("application/json"),
        "one answer, plain JSON"
    );
    assert_eq!(ok.json()["result"]["resultType"], "complete");

    type Case<'a> = (Vec<(&'a str, &'a str)>, String, u16, i64);
    let cases: Vec<Case<'_>> = vec![
        (vec![v], modern(2, "tools/list", json!({})), 400, -32020),
        (vec![v, ("Mcp-Method", "prompts/list")], modern(3, "tools/list", json!({})), 400, -32020),
        (vec![v, ("Mcp-Method", "TOOLS/LIST")], modern(4, "tools/list", json!({})), 400, -32020),
        (vec![v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "wrong")], modern(5, "tools/call", json!({"name": "hello"})), 400, -32020),
        (vec![v, ("Mcp-Method", "tools/call")], modern(6, "tools/call", json!({"name": "hello"})), 400, -32020),
        (vec![v, ("Mcp-Method", "ping")], modern(7, "ping", json!({})), 404, -32601),
        (vec![v, ("Mcp-Method", "nope")], modern(8, "nope", json!({})), 404, -32601),
        (vec![v, ("Mcp-Method", "tools/list")], json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}).to_string(), 400, -32602),
        (vec![("MCP-Protocol-Version", "v999.0.0"), ("Mcp-Method", "tools/list")], json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0", "io.modelcontextprotocol/clientCapabilities": {}}}}).to_string(), 400, -32022),
        (vec![v, ("Mcp-Method", "tools/list")], json!({"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0", "io.modelcontextprotocol/clientCapabilities": {}}}}).to_string(), 400, -32020),
    ];
    for (headers, body, status, code) in cases {
        let reply = send(port, "POST", &headers, &body).await;
        assert_eq!(reply.status, status, "{body}");
        assert_eq!(reply.json()["error"]["code"], code, "{body}");
        assert!(reply.json()["id"].is_i64(), "the id is echoed: {body}");
    }
    let name = send(
        port,
        "POST",
        &[v, ("mcp-method", "tools/call"), ("MCP-NAME", "  hello ")],
        &modern(12, "tools/call", json!({"name": "hello"})),
    )
    .await;
    assert_eq!(
        name.status, 200,
        "header names are case-insensitive, values trimmed"
    );
    assert_eq!(name.json()["result"]["content"][0]["text"], "hello");
    let encoded = send(
        port,
        "POST",
        &[
            v,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?aGVsbG8=?="),
        ],
        &modern(13, "tools/call", json!({"name": "hello"})),
    )
    .await;
    assert_eq!(encoded.status, 200);

    assert_eq!(send(port, "GET", &[v], "").await.status, 405);
    assert_eq!(send(port, "DELETE", &[v], "").await.status, 405);

    let mut progress = json!({"name": "count"});
    progress["_meta"] = meta();
    progress["_meta"]["progressToken"] = json!("p1");
    let body =
        json!({"jsonrpc": "2.0", "id": 14, "method": "tools/call", "params": progress}).to_string();
    let streamed = send(
        port,
        "POST",
        &[v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "count")],
        &body,
    )
    .await;
    assert_eq!(streamed.status, 200);
    assert_eq!(
        streamed.header("content-type"),
        Some("text/event-stream"),
        "SSE because progress came first"
    );
    let events = streamed.events();
    assert_eq!(events.len(), 4);
    assert!(events[..3]
        .iter()
        .all(|e| e["method"] == "notifications/progress"));
    assert_eq!(events[3]["result"]["content"][0]["text"], "counted");

    let _ = stop.send(());
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_2025_wire_has_sessions_that_end() {
    let mut config = HttpConfig::default();
    config.session_idle_timeout = Duration::from_secs(1);
    config.max_sessions = 2;
    // The global cap is what this test checks: one client may take both sessions.
    config.max_sessions_per_client = 2;
    let (port, stop, task) = start(config).await;
    let init = initialize_body();
    let opened = send(port, "POST", &[], &init).await;
    assert_eq!(opened.status, 200);
    assert_eq!(opened.json()["result"]["protocolVersion"], "2025-11-25");
    let sid = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    assert_eq!(sid.len(), 32);
    assert!(
        sid.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "visible ASCII"
    );
    let s = ("Mcp-Session-Id", sid.as_str());
    let v = ("MCP-Protocol-Version", "2025-11-25");

    let note = send(
        port,
        "POST",
        &[s, v],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(note.status, 202);
    let listed = send(
        port,
        "POST",
        &[s, v],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(listed.status, 200);
    assert_eq!(listed.json()["result"]["tools"][0]["name"], "hello");
    assert!(listed.json()["result"].get("resultType").is_none());

    let no_session = send(
        port,
        "POST",
        &[v],
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(no_session.status, 400);
    let bad_version = send(
        port,
        "POST",
        &[s, ("MCP-Protocol-Version", "1999-01-01")],
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(bad_version.status, 400);

    assert_eq!(send(port, "DELETE", &[s, v], "").await.status, 200);
    let gone = send(
        port,
        "POST",
        &[s, v],
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(gone.status, 404, "a deleted session is gone");

    // An idle session expires.
    let again = send(port, "POST", &[], &init).await;
    let sid = again.header("mcp-session-id").unwrap().to_owned();
    // max_sessions is 2: a second session opens, a third is refused.
    assert_eq!(send(port, "POST", &[], &init).await.status, 200);
    let full = send(port, "POST", &[], &init).await;
    assert_eq!(full.status, 503);
    assert!(full.header("mcp-session-id").is_none());
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let expired = send(
        port,
        "POST",
        &[("Mcp-Session-Id", sid.as_str()), v],
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(expired.status, 404);

    let _ = stop.send(());
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_origins_and_big_bodies_are_refused() {
    let mut config = HttpConfig::default();
    config.max_body_bytes = 1024;
    let (port, stop, task) = start(config).await;
    let v = ("MCP-Protocol-Version", "2026-07-28");
    let discover = modern(1, "server/discover", json!({}));
    let evil = send(
        port,
        "POST",
        &[
            v,
            ("Mcp-Method", "server/discover"),
            ("Origin", "http://evil.example.com"),
        ],
        &discover,
    )
    .await;
    assert_eq!(evil.status, 403);
    let local = send(
        port,
        "POST",
        &[
            v,
            ("Mcp-Method", "server/discover"),
            ("Origin", &format!("http://localhost:{port}")),
        ],
        &discover,
    )
    .await;
    assert_eq!(local.status, 200);
    let big = modern(
        2,
        "tools/call",
        json!({"name": "hello", "arguments": {"x": "y".repeat(5000)}}),
    );
    let refused = send(
        port,
        "POST",
        &[v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "hello")],
        &big,
    )
    .await;
    assert_eq!(refused.status, 413);
    let _ = stop.send(());
    let _ = task.await;
}

struct DropFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

async fn start_slow(
    config: HttpConfig,
) -> (
    u16,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    Stop,
    tokio::task::JoinHandle<()>,
) {
    let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = dropped.clone();
    let slow = modelctx::server::ToolDef::<()>::from_schema(
        "slow",
        json!({"type": "object"}),
        move |_, args| {
            let guard = DropFlag(flag.clone());
            async move {
                let wait = args.get("ms").and_then(Value::as_u64).unwrap_or(30_000);
                tokio::time::sleep(Duration::from_millis(wait)).await;
                #[allow(clippy::mem_forget)]
                // finishing is not a drop: only a cancelled call drops the flag
                std::mem::forget(guard);
                Ok(CallToolResult::text("finished"))
            }
        },
    )
    .unwrap()
    .description("Sleeps.");
    let (port, stop, task) = serve(McpServer::new("slow").tool(slow), config).await;
    (port, dropped, stop, task)
}

async fn wait_for(flag: &std::sync::atomic::AtomicBool) -> bool {
    for _ in 0..100 {
        if flag.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_2026_response_cancels_the_request() {
    let (port, dropped, stop, task) = start_slow(HttpConfig::default()).await;
    let body = modern(1, "tools/call", json!({"name": "slow"}));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: slow\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(stream);
    assert!(
        wait_for(&dropped).await,
        "the handler was dropped when the client went away"
    );
    let _ = stop.send(());
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_cancellation_aborts_the_handler_and_shutdown_lets_requests_finish() {
    let (port, dropped, stop, task) = start_slow(HttpConfig::default()).await;
    let sid = open_session(port).await;
    let call = tokio::spawn({
        let sid = sid.clone();
        async move {
            send(
                port,
                "POST",
                &[("Mcp-Session-Id", &sid)],
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}"#,
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancel = send(
        port,
        "POST",
        &[("Mcp-Session-Id", &sid)],
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#,
    )
    .await;
    assert_eq!(cancel.status, 202);
    assert!(wait_for(&dropped).await, "the handler was aborted");
    let cancelled = call.await.unwrap();
    assert_eq!(cancelled.status, 200);
    assert_eq!(cancelled.header("content-type"), Some("text/event-stream"));
    assert!(
        cancelled.events().is_empty(),
        "a cancelled request is never answered: {}",
        cancelled.body
    );

    // Graceful shutdown: a request in flight still gets its answer.
    let finishing = tokio::spawn({
        let sid = sid.clone();
        async move {
            send(port, "POST", &[("Mcp-Session-Id", &sid)], r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"slow","arguments":{"ms":300}}}"#).await
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let _ = stop.send(());
    let finished = finishing.await.unwrap();
    assert_eq!(finished.status, 200);
    assert_eq!(finished.json()["result"]["content"][0]["text"], "finished");
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_stream_is_resumable_with_last_event_id() {
    let (port, stop, task) = start(HttpConfig::default()).await;
    let sid = open_session(port).await;
    let s = ("Mcp-Session-Id", sid.as_str());
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","_meta":{"progressToken":"p"}}}"#;
    let streamed = send(port, "POST", &[s], call).await;
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    let first_lines: Vec<&str> = streamed.body.lines().take(3).collect();
    assert!(
        first_lines[0].starts_with("id: ") && first_lines[0].ends_with("-0"),
        "priming event id: {first_lines:?}"
    );
    assert_eq!(first_lines[1], "retry: 1000");
    assert_eq!(first_lines[2], "data: ");
    let ids: Vec<&str> = streamed
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .collect();
    assert_eq!(
        ids.len(),
        5,
        "priming + three progress + the result, each with an id"
    );
    assert_eq!(
        streamed.events().last().unwrap()["result"]["content"][0]["text"],
        "counted"
    );

    // A client that lost the stream after the priming event gets the rest of it.
    let replayed = send(port, "GET", &[s, ("Last-Event-ID", ids[0])], "").await;
    assert_eq!(replayed.status, 200);
    let events = replayed.events();
    assert_eq!(events.len(), 4);
    assert_eq!(events[3]["id"], 2);
    let after_two = send(port, "GET", &[s, ("Last-Event-ID", ids[2])], "").await;
    assert_eq!(
        after_two.events().len(),
        2,
        "only what came after that event"
    );

    // A handler that closes its stream: the POST gets the priming event only, the answer
    // comes with the reconnection.
    let closed = send(
        port,
        "POST",
        &[s],
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"polled"}}"#,
    )
    .await;
    assert_eq!(closed.header("content-type"), Some("text/event-stream"));
    assert!(closed.events().is_empty(), "{}", closed.body);
    let priming = closed
        .body
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap()
        .to_owned();
    let resumed = send(port, "GET", &[s, ("Last-Event-ID", &priming)], "").await;
    let events = resumed.events();
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0]["result"]["content"][0]["text"],
        "answered after the stream closed"
    );
    let _ = stop.send(());
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_host_is_refused_and_loopback_names_accepted() {
    let (port, stop, task) = start(HttpConfig::default()).await;
    let v = ("MCP-Protocol-Version", "2026-07-28");
    let discover = modern(1, "server/discover", json!({}));
    let h = [v, ("Mcp-Method", "server/discover")];
    assert_eq!(
        send_as(port, "evil.example.com", "POST", &h, &discover)
            .await
            .status,
        403
    );
    assert_eq!(
        send_as(
            port,
            &format!("evil.example.com:{port}"),
            "POST",
            &h,
            &discover
        )
        .await
        .status,
        403
    );
    assert_eq!(
        send_as(port, &format!("localhost:{port}"), "POST", &h, &discover)
            .await
            .status,
        200
    );
    assert_eq!(
        send_as(port, &format!("[::1]:{port}"), "POST", &h, &discover)
            .await
            .status,
        200
    );
    let _ = stop.send(());
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_over_http_are_a_2025_session_or_none_for_2026() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    let connects = Arc::new(AtomicUsize::new(0));
    let closes = Arc::new(AtomicUsize::new(0));
    // What each message's context says of its session: its id, or None.
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let mut server = McpServer::new("sessions").tool(HelloTool);
    let (c, d, s) = (connects.clone(), closes.clone(), seen.clone());
    server
        .lowlevel()
        .on_connect(move |_| {
            c.fetch_add(1, Ordering::SeqCst);
        })
        .on_close(move |_| {
            d.fetch_add(1, Ordering::SeqCst);
        })
        .middleware(move |msg, next| {
            s.lock()
                .unwrap()
                .push(msg.session().map(|s| s.id().to_owned()));
            next.run(msg)
        });
    let (port, stop, task) = serve(server, HttpConfig::default()).await;
    let v = ("MCP-Protocol-Version", "2026-07-28");
    for id in 1..=3 {
        let r = send(
            port,
            "POST",
            &[v, ("Mcp-Method", "tools/list")],
            &modern(id, "tools/list", json!({})),
        )
        .await;
        assert_eq!(r.status, 200);
    }
    assert_eq!(
        (
            connects.load(Ordering::SeqCst),
            closes.load(Ordering::SeqCst)
        ),
        (0, 0),
        "a 2026 request over HTTP opens no session and runs no session hooks"
    );
    assert_eq!(*seen.lock().unwrap(), vec![None, None, None]);
    let sid = open_session(port).await;
    for id in 2..=4 {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string();
        assert_eq!(
            send(port, "POST", &[("Mcp-Session-Id", &sid)], &body)
                .await
                .status,
            200
        );
    }
    assert_eq!(
        connects.load(Ordering::SeqCst),
        1,
        "a 2025 session connects once"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3 + 4, "initialize and three tools/list");
    assert!(
        seen[3..].iter().all(|s| s.as_deref() == Some(sid.as_str())),
        "{seen:?}"
    );
    assert_eq!(
        send(port, "DELETE", &[("Mcp-Session-Id", &sid)], "")
            .await
            .status,
        200
    );
    assert_eq!(closes.load(Ordering::SeqCst), 1, "and closes when deleted");
    let _ = stop.send(());
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bookshop_example_serves_over_http() {
    use tokio::io::AsyncBufReadExt;
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples");
    let path = dir.join("bookshop");
    if !path.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--example", "bookshop"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(status.success());
    }
    let mut child = tokio::process::Command::new(path)
        .args(["--http", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let port: u16 = line
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let v = ("MCP-Protocol-Version", "2026-07-28");
    let call = modern(
        1,
        "tools/call",
        json!({"name": "search_books", "arguments": {"query": "dune"}}),
    );
    let found = send(
        port,
        "POST",
        &[
            v,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "search_books"),
        ],
        &call,
    )
    .await;
    assert_eq!(found.status, 200);
    assert_eq!(
        found.json()["result"]["structuredContent"][0]["title"],
        "Dune"
    );
    let _ = child.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn param_headers_notifications_timeouts_and_mounting() {
    use modelctx::transport::{axum, McpHttp};
    let echo = modelctx::server::ToolDef::<()>::from_schema(
        "regional",
        json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}),
        |_, args| async move { Ok(CallToolResult::text(format!("region={}", args["region"]))) },
    )
    .unwrap()
    .description("Mirrors region.");
    let stuck = modelctx::server::ToolDef::<()>::from_schema(
        "stuck",
        json!({"type": "object"}),
        |_, _| async {
            std::future::pending::<()>().await;
            Ok(CallToolResult::text("never"))
        },
    )
    .unwrap()
    .description("Never answers.");
    let server = McpServer::new("mounted").tool(echo).tool(stuck);
    let mut config = HttpConfig::default();
    config.request_timeout = Duration::from_millis(300);
    let http = McpHttp::new(server, config).await.unwrap();
    // Merged into an app of our own, at the configured path.
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(http.axum_router());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server_task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let v = ("MCP-Protocol-Version", "2026-07-28");
    let call = |region: &str| {
        modern(
            1,
            "tools/call",
            json!({"name": "regional", "arguments": {"region": region}}),
        )
    };
    let h = |param: &'static str| {
        vec![
            v,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "regional"),
            ("Mcp-Param-Region", param),
        ]
    };
    assert_eq!(
        send(port, "POST", &h("eu-west"), &call("eu-west"))
            .await
            .status,
        200
    );
    assert_eq!(
        send(
            port,
            "POST",
            &h("=?base64?ZXUtd2VzdA==?="),
            &call("eu-west")
        )
        .await
        .status,
        200
    );
    let wrong = send(port, "POST", &h("us-east"), &call("eu-west")).await;
    assert_eq!(
        (wrong.status, wrong.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // The arguments' name written with an escape names the same member: still checked.
    let escaped = call("eu-west").replace(r#""arguments""#, r#""\u0061rguments""#);
    assert!(escaped.contains("u0061rguments"), "{escaped}");
    let wrong = send(port, "POST", &h("us-east"), &escaped).await;
    assert_eq!(
        (wrong.status, wrong.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    assert_eq!(
        send(port, "POST", &h("eu-west"), &escaped).await.status,
        200
    );
    let bad_b64 = send(port, "POST", &h("=?base64?ZXUtd2VzdA?="), &call("eu-west")).await;
    assert_eq!(bad_b64.status, 400);
    let missing = send(
        port,
        "POST",
        &[v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "regional")],
        &call("eu-west"),
    )
    .await;
    assert_eq!(
        (missing.status, missing.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );

    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": meta(), "requestId": 1}}).to_string();
    assert_eq!(
        send(
            port,
            "POST",
            &[v, ("Mcp-Method", "notifications/cancelled")],
            &note
        )
        .await
        .status,
        202
    );

    let timed_out = send(
        port,
        "POST",
        &[v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "stuck")],
        &modern(9, "tools/call", json!({"name": "stuck"})),
    )
    .await;
    assert_eq!(timed_out.json()["error"]["code"], -32603);
    assert!(timed_out.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("timed out"));
    server_task.abort();
    http.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standalone_stream_carries_list_changes_and_does_not_block_shutdown() {
    let server = McpServer::new("standalone").tool(HelloTool);
    let handle = server.handle();
    let (port, stop, task) = serve(server, HttpConfig::default()).await;
    let sid = open_session(port).await;
    // Open the GET stream by hand and keep it open.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let get = format!("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {sid}\r\n\r\n");
    stream.write_all(get.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    handle.add_tool(CountTool).unwrap();
    let mut seen = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&seen).contains("list_changed") {
                break;
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&seen).into_owned();
    assert!(text.contains("retry: 1000"), "priming event: {text}");
    assert!(text.contains("notifications/tools/list_changed"), "{text}");
    // A second GET while the first is open is refused; shutdown does not wait for the stream.
    let second = send(port, "GET", &[("Mcp-Session-Id", &sid)], "").await;
    assert_eq!(second.status, 409);
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("shutdown finishes")
        .unwrap();
}

/// The `Mcp-Param-*` headers checked are those of the tool as it is now: a tool replaced at
/// run time without `x-mcp-header` is no longer checked, one given it again is, and a removed
/// tool is unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrored_headers_follow_the_tools_as_they_change() {
    let mirrored = |name: &str| {
        modelctx::server::ToolDef::<()>::from_schema(
            name,
            json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}),
            |_, args| async move { Ok(CallToolResult::text(format!("region={}", args["region"]))) },
        )
        .unwrap()
        .description("Mirrors region.")
    };
    let plain = modelctx::server::ToolDef::<()>::from_schema(
        "regional",
        json!({"type": "object", "properties": {"region": {"type": "string"}}}),
        |_, _| async move { Ok(CallToolResult::text("plain")) },
    )
    .unwrap()
    .description("Mirrors nothing.");
    let server = McpServer::new("changing").tool(mirrored("regional"));
    let handle = server.handle();
    let (port, stop, task) = serve(server, HttpConfig::default()).await;
    let body = modern(
        1,
        "tools/call",
        json!({"name": "regional", "arguments": {"region": "eu-west"}}),
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "regional"),
        ("Mcp-Param-Region", "us-east"),
    ];
    let refused = send(port, "POST", &headers, &body).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(
        refused.body.contains("Mcp-Param-Region"),
        "{}",
        refused.body
    );

    handle.replace_tool(plain);
    let served = send(port, "POST", &headers, &body).await;
    assert_eq!(served.status, 200, "{}", served.body);
    assert!(served.body.contains("plain"), "{}", served.body);

    handle.replace_tool(mirrored("regional"));
    assert_eq!(send(port, "POST", &headers, &body).await.status, 400);

    assert!(handle.remove_tool("regional"));
    let gone = send(port, "POST", &headers, &body).await;
    assert!(!gone.body.contains("Mcp-Param-Region"), "{}", gone.body);
    assert!(gone.body.contains("regional"), "{}", gone.body);
    let _ = stop.send(());
    task.await.unwrap();
}

/// Under `serve_http_on` a handler sees the peer's address both as `peer_addr()` and as the
/// `ConnectInfo` extension (as under `axum::serve`), on the direct path to the endpoint too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_sees_the_peer_address() {
    use modelctx::transport::axum::extract::ConnectInfo;
    let whoami = modelctx::server::ToolDef::<()>::from_schema(
        "whoami",
        json!({"type": "object"}),
        |ctx, _| async move {
            let http = ctx.http().expect("an HTTP request");
            let info = http
                .extensions()
                .get::<ConnectInfo<std::net::SocketAddr>>()
                .map(|info| info.0);
            Ok(CallToolResult::text(format!(
                "{:?} {:?}",
                http.peer_addr(),
                info
            )))
        },
    )
    .unwrap()
    .description("Says who calls.");
    let (port, stop, task) =
        serve(McpServer::new("peer").tool(whoami), HttpConfig::default()).await;
    let answer = send(
        port,
        "POST",
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "whoami"),
        ],
        &modern(1, "tools/call", json!({"name": "whoami", "arguments": {}})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let text: Value = serde_json::from_str(&answer.body).unwrap();
    let text = text["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let (peer, info) = text.split_once(' ').unwrap();
    assert!(peer.starts_with("Some(127.0.0.1:"), "{text}");
    assert_eq!(peer, info, "{text}");
    let _ = stop.send(());
    task.await.unwrap();
}

/// On the 2026 wire "close the stream" means nothing: a handler that asks for it and then
/// answers gets a plain JSON answer, not an event stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_close_stream_changes_nothing() {
    let (port, stop, task) = start(HttpConfig::default()).await;
    let answer = send(
        port,
        "POST",
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "polled"),
        ],
        &modern(1, "tools/call", json!({"name": "polled"})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(
        answer.json()["result"]["content"][0]["text"],
        "answered after the stream closed"
    );
    let _ = stop.send(());
    let _ = task.await;
}

/// Writes one 2026 `tools/call hello` with a chunked body, the body in chunks of `chunk` bytes
/// sent one by one (each its own frame at the server), and reads the response: status,
/// `Content-Type`, body.
async fn chunked_call(
    stream: &mut TcpStream,
    port: u16,
    body: &str,
    chunk: usize,
) -> (u16, String, String) {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: hello\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // A server that refuses the body may answer and close before reading it all: a failed
    // write only ends the sending.
    for piece in body.as_bytes().chunks(chunk) {
        let mut frame = format!("{:x}\r\n", piece.len()).into_bytes();
        frame.extend_from_slice(piece);
        frame.extend_from_slice(b"\r\n");
        if stream.write_all(&frame).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("a response in time")
            .unwrap();
        assert!(n > 0, "the server closed before answering");
        received.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&received).into_owned();
        let Some((head, rest)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let header = |name: &str| {
            head.lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
                })
                .unwrap_or_default()
        };
        let length: usize = header("content-length").parse().expect("a length");
        if rest.len() < length {
            continue;
        }
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        return (status, header("content-type"), rest[..length].to_owned());
    }
}

/// A body sent in several chunks is read whole (and still bounded by `max_body_bytes`); the
/// connection goes on serving, each answer with its `Content-Type`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_in_chunks_is_read_whole_and_bounded() {
    let mut config = HttpConfig::default();
    config.max_body_bytes = 1024;
    let (port, stop, task) = start(config).await;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    for id in 1..=2 {
        let call = modern(id, "tools/call", json!({"name": "hello", "arguments": {}}));
        let (status, content_type, body) = chunked_call(&mut stream, port, &call, 40).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(content_type, "application/json");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"]["content"][0]["text"], "hello");
    }
    let big = modern(
        3,
        "tools/call",
        json!({"name": "hello", "arguments": {"x": "y".repeat(1500)}}),
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (status, content_type, body) = chunked_call(&mut stream, port, &big, 600).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(content_type, "application/json");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{body}");
    let _ = stop.send(());
    task.await.unwrap();
}
