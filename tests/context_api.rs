//! What a handler's context offers at run time, through the public API in both eras: progress
//! reports that take integers and go out as integers, cancellation the handler can see and
//! clean up after, URL-mode elicitation with its completion notification and the `-32042`
//! error, and serving over HTTP with a method like `serve_stdio`.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelctx::prelude::*;
use modelctx::transport::{HttpClientTransport, HttpConfig, RawConnection};
use modelctx::types::*;
use serde_json::{json, Value};
use support::{handshake_with, modern, request};

/// Reads lines until the answer to `id`; returns the notifications before it and the answer.
async fn until_answer(conn: &mut RawConnection, id: i64) -> (Vec<Value>, Value) {
    let mut notes = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(5), conn.recv_json())
            .await
            .expect("an answer within 5 s")
            .expect("the connection is open");
        if line["id"] == json!(id) {
            return (notes, line);
        }
        notes.push(line);
    }
}

/// A 2025 connection declaring `capabilities`.
async fn legacy_conn(server: Server, capabilities: Value) -> RawConnection {
    let mut conn = RawConnection::open(server).await.unwrap();
    handshake_with(&mut conn, capabilities).await;
    conn
}

/// A 2026 request line whose envelope declares `capabilities`, with `progress_token`.
fn modern_call(id: i64, name: &str, capabilities: Value, token: Option<Value>) -> Value {
    let mut line = modern(id, "tools/call", json!({"name": name, "arguments": {}}));
    line["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities;
    if let Some(token) = token {
        line["params"]["_meta"]["progressToken"] = token;
    }
    line
}

fn legacy_call(id: i64, name: &str, token: Option<Value>) -> Value {
    let mut params = json!({"name": name, "arguments": {}});
    if let Some(token) = token {
        params["_meta"] = json!({ "progressToken": token });
    }
    request(id, "tools/call", params)
}

// ---------------------------------------------------------------------------------------------
// Progress

fn progress_server() -> Server {
    let mut server = Server::new("progress");
    server.on_call_tool(|ctx, _| async move {
        ctx.progress(1).total(4).message("one").await;
        ctx.progress(2usize).total(4u64).await;
        ctx.progress(2).message("not larger: dropped").await;
        ctx.progress(2.5f32).await;
        ctx.progress(3i64).total(4).await;
        ctx.progress(f64::NAN).await;
        Ok(CallToolResult::text("done"))
    });
    server
}

fn expected_progress(token: Value) -> Vec<Value> {
    [
        json!({"progressToken": token, "progress": 1, "total": 4, "message": "one"}),
        json!({"progressToken": token, "progress": 2, "total": 4}),
        json!({"progressToken": token, "progress": 2.5}),
        json!({"progressToken": token, "progress": 3, "total": 4}),
    ]
    .into_iter()
    .map(|params| json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}))
    .collect()
}

#[tokio::test]
async fn progress_takes_integers_and_floats_and_writes_whole_numbers_as_integers() {
    // 2026: the token comes with the request's envelope.
    let mut conn = RawConnection::open(progress_server()).await.unwrap();
    conn.send_json(&modern_call(1, "p", json!({}), Some(json!("tok"))))
        .await
        .unwrap();
    let (notes, answer) = until_answer(&mut conn, 1).await;
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    assert_eq!(notes, expected_progress(json!("tok")));
    // The text itself says `1`, not `1.0`.
    let text = serde_json::to_string(&notes[0]).unwrap();
    assert!(text.contains(r#""progress":1,"#), "{text}");
    // Without a token: nothing but the answer.
    conn.send_json(&modern_call(2, "p", json!({}), None))
        .await
        .unwrap();
    let (notes, _) = until_answer(&mut conn, 2).await;
    assert!(notes.is_empty(), "{notes:?}");

    // 2025: the same, in a session.
    let mut conn = legacy_conn(progress_server(), json!({})).await;
    conn.send_json(&legacy_call(3, "p", Some(json!(7))))
        .await
        .unwrap();
    let (notes, answer) = until_answer(&mut conn, 3).await;
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    assert_eq!(notes, expected_progress(json!(7)));
    conn.send_json(&legacy_call(4, "p", None)).await.unwrap();
    let (notes, _) = until_answer(&mut conn, 4).await;
    assert!(notes.is_empty(), "{notes:?}");
}

// ---------------------------------------------------------------------------------------------
// Cancellation

/// What the `watch` tool saw when it was cancelled.
#[derive(Default)]
struct Seen {
    cleaned: AtomicBool,
    is_cancelled: AtomicBool,
    started: AtomicUsize,
}

/// `watch` waits for its cancellation and cleans up (awaiting, and trying to send progress,
/// which must not reach the client); `unwatched` never asks and is dropped at once.
fn cancel_server(seen: Arc<Seen>) -> Server {
    let mut server = Server::new("cancel");
    server.on_call_tool(move |ctx, params| {
        let seen = seen.clone();
        async move {
            seen.started.fetch_add(1, Ordering::SeqCst);
            if params.name == "unwatched" {
                tokio::time::sleep(Duration::from_secs(30)).await;
                return Ok(CallToolResult::text("too late"));
            }
            tokio::select! {
                _ = ctx.cancelled() => {
                    // Cleanup may await; what it sends is dropped.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    ctx.progress(99).message("after the cancellation").await;
                    seen.is_cancelled.store(ctx.is_cancelled(), Ordering::SeqCst);
                    seen.cleaned.store(true, Ordering::SeqCst);
                    Ok(CallToolResult::text("cancelled answer: never sent"))
                }
                _ = tokio::time::sleep(Duration::from_secs(30)) => {
                    Ok(CallToolResult::text("finished"))
                }
            }
        }
    });
    server
}

async fn wait_for(flag: &AtomicBool) -> bool {
    for _ in 0..100 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

async fn wait_started(seen: &Seen, n: usize) {
    for _ in 0..100 {
        if seen.started.load(Ordering::SeqCst) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the handler did not start");
}

fn cancelled(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "changed my mind"}})
}

#[tokio::test]
async fn a_handler_that_awaits_cancelled_cleans_up_and_its_request_gets_no_answer() {
    for legacy in [false, true] {
        let seen = Arc::new(Seen::default());
        let mut conn = match legacy {
            true => legacy_conn(cancel_server(seen.clone()), json!({})).await,
            false => RawConnection::open(cancel_server(seen.clone()))
                .await
                .unwrap(),
        };
        let call = match legacy {
            true => legacy_call(1, "watch", Some(json!("w"))),
            false => modern_call(1, "watch", json!({}), Some(json!("w"))),
        };
        conn.send_json(&call).await.unwrap();
        wait_started(&seen, 1).await;
        conn.send_json(&cancelled(1)).await.unwrap();
        assert!(
            wait_for(&seen.cleaned).await,
            "legacy={legacy}: cleanup ran"
        );
        assert!(seen.is_cancelled.load(Ordering::SeqCst), "legacy={legacy}");
        // Neither the cleanup's progress nor its answer went out: the next line is the
        // answer to the next request.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let ping = match legacy {
            true => request(2, "ping", json!({})),
            false => modern(2, "server/discover", json!({})),
        };
        conn.send_json(&ping).await.unwrap();
        let (notes, answer) = until_answer(&mut conn, 2).await;
        assert!(notes.is_empty(), "legacy={legacy}: {notes:?}");
        assert!(answer.get("result").is_some(), "{answer}");
    }
}

#[tokio::test]
async fn the_client_cancelling_fires_the_token_in_both_eras() {
    for legacy in [false, true] {
        let seen = Arc::new(Seen::default());
        let mut builder = Client::builder();
        if legacy {
            builder = builder.legacy();
        }
        let client = builder.connect(cancel_server(seen.clone())).await.unwrap();
        let pending = client
            .start_request("tools/call", json!({"name": "watch", "arguments": {}}))
            .await
            .unwrap();
        wait_started(&seen, 1).await;
        let id = pending.id().clone();
        client.cancel(&id, Some("no longer needed")).await.unwrap();
        assert!(wait_for(&seen.cleaned).await, "legacy={legacy}");
        drop(pending);
        client.close().await;
    }
}

#[tokio::test]
async fn closing_the_connection_cancels_a_running_request() {
    let seen = Arc::new(Seen::default());
    let mut server = cancel_server(seen.clone());
    // Running requests are cancelled once the input ended and this grace passed.
    server.options_mut().shutdown_grace = Duration::from_millis(200);
    // The close hooks run after the cancelled handler's cleanup, not beside it.
    let at_close: Arc<Mutex<Option<bool>>> = Arc::default();
    let (record, cleaned) = (at_close.clone(), seen.clone());
    server.on_close(move |_| {
        *record.lock().unwrap() = Some(cleaned.cleaned.load(Ordering::SeqCst));
    });
    let mut conn = RawConnection::open(server).await.unwrap();
    conn.send_json(&modern_call(1, "watch", json!({}), None))
        .await
        .unwrap();
    wait_started(&seen, 1).await;
    conn.finish_sending().await.unwrap();
    assert!(
        wait_for(&seen.cleaned).await,
        "cleanup ran at connection end"
    );
    for _ in 0..100 {
        if at_close.lock().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        *at_close.lock().unwrap(),
        Some(true),
        "on_close ran, after the cleanup"
    );
}

#[tokio::test]
async fn closing_a_2026_http_response_fires_the_token() {
    let seen = Arc::new(Seen::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(cancel_server(seen.clone()).serve_http_on(
        listener,
        HttpConfig::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    let client = Client::builder()
        .connect(HttpClientTransport::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap())
        .await
        .unwrap();
    assert_eq!(client.era(), Era::Modern);
    let pending = client
        .start_request("tools/call", json!({"name": "watch", "arguments": {}}))
        .await
        .unwrap();
    wait_started(&seen, 1).await;
    // Giving up closes the response stream: that is the cancellation on 2026 HTTP.
    drop(pending);
    assert!(wait_for(&seen.cleaned).await, "cleanup ran");
    client.close().await;
    let _ = stop.send(());
}

// ---------------------------------------------------------------------------------------------
// URL-mode elicitation

const CONNECT_URL: &str = "https://example.com/connect?id=connect-1";
const AUTH_URL: &str = "https://example.com/auth?id=auth-1";

/// `connect` asks for a URL elicitation; `finish` says it completed; `needs_auth` fails with
/// `-32042` until `connected` is set.
fn url_server(connected: Arc<AtomicBool>) -> Server {
    let mut server = Server::new("url");
    server.on_call_tool(move |ctx, params| {
        let connected = connected.clone();
        async move {
            match params.name.as_str() {
                "connect" => {
                    let answer = ctx
                        .elicit_url("connect-1", "Connect your account", CONNECT_URL)
                        .await?;
                    Ok(CallToolResult::text(format!("{answer:?}")))
                }
                "finish" => {
                    ctx.complete_elicitation("connect-1").await?;
                    Ok(CallToolResult::text("finished"))
                }
                _ if connected.load(Ordering::SeqCst) => Ok(CallToolResult::text("connected")),
                _ => Err(McpError::url_elicitation_required([
                    ElicitRequestParams::url("auth-1", "Sign in", AUTH_URL),
                ])),
            }
        }
    });
    server
}

fn url_capable() -> ClientCapabilities {
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation = json!({"form": {}, "url": {}}).as_object().cloned();
    capabilities
}

#[tokio::test]
async fn elicit_url_asks_the_client_in_both_eras() {
    for legacy in [false, true] {
        let asked: Arc<Mutex<Vec<ElicitRequestParams>>> = Arc::default();
        let completed: Arc<Mutex<Vec<Value>>> = Arc::default();
        let (a, c) = (asked.clone(), completed.clone());
        let mut builder = Client::builder()
            .capabilities(url_capable())
            .on_elicit(move |p| {
                a.lock().unwrap().push(p);
                async { Ok(ElicitResult::accept_url()) }
            })
            .on_notification("notifications/elicitation/complete", move |n| {
                c.lock().unwrap().push(n.params.clone());
            });
        if legacy {
            builder = builder.legacy();
        }
        let client = builder.connect(url_server(Arc::default())).await.unwrap();
        let result = client.call_tool("connect", json!({})).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("Accepted(())"));
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "legacy={legacy}");
        assert_eq!(asked[0].mode.as_deref(), Some("url"));
        assert_eq!(asked[0].url.as_deref(), Some(CONNECT_URL));
        assert_eq!(asked[0].message, "Connect your account");
        assert!(asked[0].requested_schema.is_none());
        // The key is the 2025 elicitationId; 2026 has none.
        let id = legacy.then(|| "connect-1".to_owned());
        assert_eq!(asked[0].elicitation_id, id, "legacy={legacy}");

        let result = client.call_tool("finish", json!({})).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("finished"));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let completed = completed.lock().unwrap().clone();
        match legacy {
            true => assert_eq!(completed, [json!({"elicitationId": "connect-1"})]),
            // The 2026 wire has no completion notification.
            false => assert!(completed.is_empty(), "{completed:?}"),
        }
        client.close().await;
    }
}

#[tokio::test]
async fn elicit_url_needs_the_url_capability() {
    for legacy in [false, true] {
        // A client that answers forms only.
        let mut builder = Client::builder().on_elicit(|_| async { Ok(ElicitResult::accept_url()) });
        if legacy {
            builder = builder.legacy();
        }
        let client = builder.connect(url_server(Arc::default())).await.unwrap();
        for tool in ["connect", "needs_auth"] {
            let err = client.call_tool(tool, json!({})).await.unwrap_err();
            assert_eq!(err.code(), -32021, "legacy={legacy} {tool}");
            assert_eq!(
                err.data(),
                Some(&json!({"requiredCapabilities": {"elicitation": {"url": {}}}})),
                "legacy={legacy} {tool}"
            );
        }
        client.close().await;
    }
}

/// A gate in front of every tool: until the user signed in, a middleware answers `-32042`.
fn gated_server() -> Server {
    let mut server = Server::new("gated");
    server.on_call_tool(|_ctx, _params| async { Ok(CallToolResult::text("inside")) });
    server.middleware(|msg: Incoming, next: Next| async move {
        match msg.method() {
            "tools/call" => Err(McpError::url_elicitation_required([
                ElicitRequestParams::url("gate-1", "Sign in first", AUTH_URL),
            ])),
            _ => next.run(msg).await,
        }
    });
    server
}

#[tokio::test]
async fn a_middlewares_url_elicitation_is_sent_as_the_era_wants_it() {
    let capabilities = json!({"elicitation": {"url": {}}});
    let mut conn = legacy_conn(gated_server(), capabilities.clone()).await;
    conn.send_json(&legacy_call(1, "any", None)).await.unwrap();
    let (_, answer) = until_answer(&mut conn, 1).await;
    assert_eq!(answer["error"]["code"], -32042, "{answer}");
    assert_eq!(answer["error"]["data"]["elicitations"][0]["url"], AUTH_URL);

    // A 2025 client that cannot show a URL gets -32021, as from a handler.
    let mut conn = legacy_conn(gated_server(), json!({"elicitation": {"form": {}}})).await;
    conn.send_json(&legacy_call(2, "any", None)).await.unwrap();
    let (_, answer) = until_answer(&mut conn, 2).await;
    assert_eq!(answer["error"]["code"], -32021, "{answer}");

    // 2026 retired -32042: the middleware's error becomes a stamped input request.
    let mut conn = RawConnection::open(gated_server()).await.unwrap();
    conn.send_json(&modern_call(3, "any", capabilities, None))
        .await
        .unwrap();
    let (_, answer) = until_answer(&mut conn, 3).await;
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    assert_eq!(
        answer["result"]["inputRequests"],
        json!({"gate-1": {"method": "elicitation/create",
                          "params": {"mode": "url", "message": "Sign in first", "url": AUTH_URL}}})
    );
    assert!(
        answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object(),
        "stamped like any 2026 result: {answer}"
    );
}

#[tokio::test]
async fn url_elicitation_required_is_32042_on_2025_and_an_input_request_on_2026() {
    let capabilities = json!({"elicitation": {"url": {}}});
    // 2025: the error, as the spec writes it.
    let mut conn = legacy_conn(url_server(Arc::default()), capabilities.clone()).await;
    conn.send_json(&legacy_call(1, "needs_auth", None))
        .await
        .unwrap();
    let (_, answer) = until_answer(&mut conn, 1).await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32042,
            "message": "This request requires more information.",
            "data": {"elicitations": [{
                "mode": "url",
                "message": "Sign in",
                "url": AUTH_URL,
                "elicitationId": "auth-1"
            }]}
        }})
    );

    // 2026 retired -32042: the same handler pauses for a URL-mode input request instead.
    let mut conn = RawConnection::open(url_server(Arc::default()))
        .await
        .unwrap();
    conn.send_json(&modern_call(2, "needs_auth", capabilities, None))
        .await
        .unwrap();
    let (_, answer) = until_answer(&mut conn, 2).await;
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    assert_eq!(
        answer["result"]["inputRequests"],
        json!({"auth-1": {"method": "elicitation/create",
                          "params": {"mode": "url", "message": "Sign in", "url": AUTH_URL}}})
    );

    // Through the client: the user completes the flow, the client retries, the call succeeds.
    let connected = Arc::new(AtomicBool::new(false));
    let flag = connected.clone();
    let client = Client::builder()
        .capabilities(url_capable())
        .on_elicit(move |p| {
            assert_eq!(p.url.as_deref(), Some(AUTH_URL));
            flag.store(true, Ordering::SeqCst);
            async { Ok(ElicitResult::accept_url()) }
        })
        .connect(url_server(connected.clone()))
        .await
        .unwrap();
    let result = client.call_tool("needs_auth", json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("connected"));
    client.close().await;
}

// ---------------------------------------------------------------------------------------------
// serve_http

/// Say hello.
#[tool]
async fn hello() -> String {
    "hello".into()
}

#[tokio::test]
async fn serve_http_is_a_method_like_serve_stdio() {
    // A free port (bound, then released for `serve_http` to bind).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = McpServer::new("http").tool(HelloTool);
    let task = tokio::spawn(server.serve_http(format!("127.0.0.1:{port}")));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut client = None;
    for _ in 0..100 {
        match Client::connect(HttpClientTransport::new(&url).unwrap()).await {
            Ok(c) => {
                client = Some(c);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    let client = client.expect("serve_http serves at /mcp");
    let result = client.call_tool("hello", json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hello"));
    client.close().await;
    task.abort();

    // An address that cannot be bound is an error, not a panic.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let err = McpServer::new("http").serve_http(addr).await.unwrap_err();
    assert!(err.is_internal(), "{err}");
}

/// Over stdio, with the server a child process: progress arrives as sent, and a cancelled call
/// that watches `ctx.cancelled()` runs its cleanup (counted by the server), in both eras.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_and_cooperative_cancellation_over_stdio() {
    use modelctx::transport::{ChildProcess, Stderr};

    for (round, builder) in [Client::builder(), Client::builder().legacy()]
        .into_iter()
        .enumerate()
    {
        let child = ChildProcess::new(support::example("torture")).stderr(Stderr::Discard);
        let client = builder.connect(child).await.unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let options = modelctx::client::RequestOptions::new().on_progress(move |p| {
            record.lock().unwrap().push((p.progress, p.total));
        });
        let done = client
            .call_tool_with("steps", json!({"steps": 3}), &options)
            .await
            .unwrap();
        assert_eq!(done.content[0].as_text(), Some("3 steps"));
        assert_eq!(
            *seen.lock().unwrap(),
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
            "round {round}"
        );

        let forever = modelctx::client::RequestOptions::new().timeout(None);
        let call = client.call_tool_with("wait_for_cancel", json!({}), &forever);
        let raced = tokio::time::timeout(Duration::from_millis(200), call).await;
        assert!(raced.is_err(), "it answers only when cancelled");
        let mut cleaned = String::new();
        for _ in 0..100 {
            let count = client.call_tool("cleanups", json!({})).await.unwrap();
            cleaned = count.content[0].as_text().unwrap_or_default().to_owned();
            if cleaned == "1" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(cleaned, "1", "round {round}: the cleanup ran once");
        client.close().await;
    }
}
