//! The JSON-RPC engine and the low-level server through the in-memory transport: envelope
//! errors, eras, concurrency, backpressure, cancellation, panics, middleware, sessions,
//! lifespan.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelctx::prelude::*;
use modelctx::transport::RawConnection;
use modelctx::types::*;
use serde_json::{json, Value};
use support::*;
use tokio::sync::Notify;

fn tools_server() -> Server {
    let mut server = Server::new("engine-test");
    server.version("0.1.0");
    server
        .on_list_tools(|_, _| async {
            Ok(ListToolsResult::new(vec![Tool::new(
                "echo",
                "Echo.",
                json!({"type": "object"}),
            )]))
        })
        .on_call_tool(|_, p| async move {
            match p.name.as_str() {
                "panic" => panic!("boom"),
                _ => Ok(CallToolResult::text(format!(
                    "{}",
                    Value::Object(p.arguments.unwrap_or_default())
                ))),
            }
        });
    server
}

async fn open(server: Server) -> RawConnection {
    RawConnection::open(server).await.unwrap()
}

#[tokio::test]
async fn malformed_input_gets_the_right_code_and_id() {
    let mut conn = open(tools_server()).await;
    let cases: &[(&[u8], i64, Value)] = &[
        (b"{\"jsonrpc\":\"2.0\",", -32700, Value::Null),
        (b"not json at all", -32700, Value::Null),
        (b"\xff\xfe{}", -32700, Value::Null),
        (b"[]", -32600, Value::Null),
        (
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
            -32600,
            Value::Null,
        ),
        (b"42", -32600, Value::Null),
        (
            b"{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}",
            -32600,
            json!(5),
        ),
        (b"{\"id\":6,\"method\":\"ping\"}", -32600, json!(6)),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
            -32600,
            Value::Null,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}",
            -32600,
            Value::Null,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
            -32600,
            Value::Null,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":7}",
            -32600,
            json!("x"),
        ),
        (b"{\"jsonrpc\":\"2.0\",\"id\":8}", -32600, json!(8)),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":[1]}",
            -32602,
            json!(9),
        ),
    ];
    for (bytes, code, id) in cases {
        conn.send_bytes(bytes).await.unwrap();
        let answer = conn.recv_json().await.expect("an answer");
        let input = String::from_utf8_lossy(bytes);
        assert_eq!(answer["error"]["code"], *code, "input {input}");
        assert_eq!(answer["id"], *id, "input {input}");
        assert_eq!(answer["jsonrpc"], "2.0");
    }
    // The server still serves.
    let answer = roundtrip(&mut conn, &modern(1, "tools/list", json!({}))).await;
    assert_eq!(answer["result"]["tools"][0]["name"], "echo");
    conn.close().await;
}

#[tokio::test]
async fn unknown_methods_and_bad_params_are_refused_in_both_eras() {
    let mut conn = open(tools_server()).await;
    let answer = roundtrip(&mut conn, &modern(1, "nope/nothing", json!({}))).await;
    assert_eq!(answer["error"]["code"], -32601);
    assert_eq!(answer["error"]["message"], "Method not found: nope/nothing");
    let answer = roundtrip(
        &mut conn,
        &modern(2, "tools/call", json!({"arguments": {}})),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(
        answer["error"]["message"],
        "Invalid params: missing field `name`"
    );
    assert_eq!(answer["id"], 2);

    handshake(&mut conn, "2025-11-25").await;
    let answer = roundtrip(&mut conn, &request(3, "nope/nothing", json!({}))).await;
    assert_eq!(answer["error"]["code"], -32601);
    let answer = roundtrip(&mut conn, &request(4, "tools/call", json!({"name": 5}))).await;
    assert_eq!(answer["error"]["code"], -32602);
    conn.close().await;
}

#[tokio::test]
async fn notifications_are_never_answered() {
    let mut conn = open(tools_server()).await;
    for line in [
        json!({"jsonrpc": "2.0", "method": "notifications/unknown", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": [1, 2]}),
        json!({"jsonrpc": "2.0", "method": 17}),
    ] {
        conn.send_json(&line).await.unwrap();
    }
    conn.send_json(&modern(7, "tools/list", json!({})))
        .await
        .unwrap();
    conn.finish_sending().await.unwrap();
    let mut lines = Vec::new();
    while let Some(line) = within(conn.recv_json()).await {
        lines.push(line);
    }
    assert_eq!(lines.len(), 1, "only the request is answered: {lines:?}");
    assert_eq!(lines[0]["id"], 7);
    conn.close().await;
}

/// Fails (instead of hanging) when the server does not answer in time.
async fn within<T>(fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), fut)
        .await
        .expect("the server answered within 5 s")
}

#[tokio::test]
async fn modern_envelope_is_validated_in_the_spec_order() {
    let mut conn = open(tools_server()).await;
    let cases = [
        (request(1, "tools/list", json!({})), -32602),
        (
            request(
                2,
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
            ),
            -32602,
        ),
        (
            request(
                3,
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
            ),
            -32602,
        ),
        (
            request(
                4,
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0"}}),
            ),
            -32602,
        ),
    ];
    for (line, code) in cases {
        let answer = roundtrip(&mut conn, &line).await;
        assert_eq!(answer["error"]["code"], code, "{line}");
        assert_eq!(answer["id"], line["id"]);
    }
    let answer = roundtrip(
        &mut conn,
        &request(
            5,
            "tools/list",
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "v999.0.0",
                "io.modelcontextprotocol/clientCapabilities": {}
            }}),
        ),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32022);
    assert_eq!(
        answer["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "v999.0.0"})
    );

    let mut no_info = modern(6, "tools/list", json!({}));
    no_info["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientInfo");
    let answer = roundtrip(&mut conn, &no_info).await;
    assert_eq!(
        answer["result"]["resultType"], "complete",
        "clientInfo is optional"
    );
    conn.close().await;
}

#[tokio::test]
async fn methods_removed_in_2026_are_not_found_there() {
    let mut conn = open(tools_server()).await;
    for (i, method) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ]
    .iter()
    .enumerate()
    {
        let answer = roundtrip(
            &mut conn,
            &modern(i as i64, method, json!({"level": "info", "uri": "x://y"})),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32601, "{method}");
    }
    handshake(&mut conn, "2025-11-25").await;
    for (i, method) in ["server/discover", "subscriptions/listen"]
        .iter()
        .enumerate()
    {
        let answer = roundtrip(&mut conn, &request(10 + i as i64, method, json!({}))).await;
        assert_eq!(
            answer["error"]["code"], -32601,
            "{method} in a 2025 session"
        );
    }
    let answer = roundtrip(&mut conn, &request(20, "ping", json!({}))).await;
    assert_eq!(answer["result"], json!({}), "ping is exactly {{}} on 2025");
    conn.close().await;
}

#[tokio::test]
async fn initialize_negotiates_the_version_and_refuses_a_second_handshake() {
    for (asked, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let mut conn = open(tools_server()).await;
        let init = handshake(&mut conn, asked).await;
        assert_eq!(init["result"]["protocolVersion"], answered, "asked {asked}");
        assert_eq!(
            init["result"]["serverInfo"],
            json!({"name": "engine-test", "version": "0.1.0"})
        );
        assert!(
            init["result"].get("resultType").is_none(),
            "2025 results are unstamped"
        );
        let again = roundtrip(&mut conn, &request(1, "initialize", init["result"].clone())).await;
        assert_eq!(again["error"]["code"], -32600);
        conn.close().await;
    }
}

#[tokio::test]
async fn a_request_before_initialize_without_meta_is_refused() {
    let mut conn = open(tools_server()).await;
    let answer = roundtrip(&mut conn, &request(1, "tools/list", json!({}))).await;
    assert_eq!(answer["error"]["code"], -32602);
    let answer = roundtrip(&mut conn, &request(2, "ping", json!({}))).await;
    assert_eq!(
        answer["result"],
        json!({}),
        "ping is allowed before initialize"
    );
    conn.close().await;
}

#[tokio::test]
async fn modern_results_are_stamped_and_cache_hints_are_configurable() {
    let mut server = tools_server();
    server.cache_hint("tools/list", CacheHint::public(60_000));
    let mut conn = open(server).await;
    let answer = roundtrip(&mut conn, &modern(1, "tools/list", json!({}))).await;
    let result = &answer["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "engine-test", "version": "0.1.0"})
    );
    let answer = roundtrip(&mut conn, &modern(2, "server/discover", json!({}))).await;
    assert_eq!(answer["result"]["ttlMs"], 0, "default ttl");
    assert_eq!(answer["result"]["cacheScope"], "private", "default scope");
    let answer = roundtrip(&mut conn, &modern(3, "tools/call", json!({"name": "echo"}))).await;
    assert!(
        answer["result"].get("ttlMs").is_none(),
        "tools/call is not cacheable"
    );
    assert_eq!(answer["result"]["resultType"], "complete");
    conn.close().await;
}

/// A server whose `slow` tool waits for `fast` to run: the answers go out as they finish.
#[tokio::test]
async fn requests_run_concurrently_and_answers_go_out_as_they_finish() {
    let gate = Arc::new(Notify::new());
    let mut server = Server::new("concurrent");
    let g = gate.clone();
    server.on_call_tool(move |_, p| {
        let gate = g.clone();
        async move {
            if p.name == "slow" {
                gate.notified().await;
            } else {
                gate.notify_one();
            }
            Ok(CallToolResult::text(p.name))
        }
    });
    let mut conn = open(server).await;
    conn.send_json(&modern(1, "tools/call", json!({"name": "slow"})))
        .await
        .unwrap();
    conn.send_json(&modern(2, "tools/call", json!({"name": "fast"})))
        .await
        .unwrap();
    let first = conn.recv_json().await.unwrap();
    let second = conn.recv_json().await.unwrap();
    assert_eq!(
        (first["id"].clone(), second["id"].clone()),
        (json!(2), json!(1))
    );
    conn.close().await;
}

#[tokio::test]
async fn in_flight_requests_are_bounded_and_reading_stops_at_the_bound() {
    let started = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let mut server = Server::new("bounded");
    server.options_mut().max_in_flight = 2;
    let (s, r) = (started.clone(), release.clone());
    server.on_call_tool(move |_, _| {
        let (started, release) = (s.clone(), r.clone());
        async move {
            started.fetch_add(1, Ordering::SeqCst);
            let _permit = release.acquire().await.map_err(McpError::other)?;
            Ok(CallToolResult::text("done"))
        }
    });
    let mut conn = open(server).await;
    for id in 1..=5 {
        conn.send_json(&modern(id, "tools/call", json!({"name": "t"})))
            .await
            .unwrap();
    }
    within(async {
        while started.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        started.load(Ordering::SeqCst),
        2,
        "only two handlers may run"
    );
    release.add_permits(5);
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(conn.recv_json().await.unwrap()["id"].as_i64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, [1, 2, 3, 4, 5], "every request answered, none lost");
    assert_eq!(started.load(Ordering::SeqCst), 5);
    conn.close().await;
}

struct DropFlag(Arc<AtomicUsize>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn cancelled_notification_aborts_the_handler_and_suppresses_the_answer() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let mut server = tools_server();
    let d = dropped.clone();
    server.on_call_tool(move |_, _| {
        let flag = DropFlag(d.clone());
        async move {
            let _flag = flag;
            std::future::pending::<()>().await;
            Ok(CallToolResult::text("never"))
        }
    });
    for legacy in [false, true] {
        let mut conn = open(server.clone()).await;
        let call = if legacy {
            handshake(&mut conn, "2025-11-25").await;
            request(9, "tools/call", json!({"name": "wait"}))
        } else {
            modern(9, "tools/call", json!({"name": "wait"}))
        };
        conn.send_json(&call).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        conn.send_json(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 9, "reason": "user pressed stop"}}),
        )
        .await
        .unwrap();
        let ping = if legacy {
            request(10, "ping", json!({}))
        } else {
            modern(10, "tools/list", json!({}))
        };
        let answer = roundtrip(&mut conn, &ping).await;
        assert_eq!(answer["id"], 10, "the cancelled request is never answered");
        conn.close().await;
    }
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        2,
        "both handlers were dropped"
    );
}

#[tokio::test]
async fn a_panic_is_an_internal_error_and_the_server_keeps_serving() {
    let mut conn = open(tools_server()).await;
    let answer = roundtrip(
        &mut conn,
        &modern(1, "tools/call", json!({"name": "panic"})),
    )
    .await;
    assert_eq!(
        answer["error"],
        json!({"code": -32603, "message": "Internal server error"})
    );
    let answer = roundtrip(&mut conn, &modern(2, "tools/call", json!({"name": "echo"}))).await;
    assert_eq!(answer["result"]["content"][0]["text"], "{}");
    conn.close().await;

    let mut conn = RawConnection::open_with(tools_server(), true)
        .await
        .unwrap();
    let answer = roundtrip(
        &mut conn,
        &modern(1, "tools/call", json!({"name": "panic"})),
    )
    .await;
    assert_eq!(answer["error"]["message"], "handler panicked: boom");
    conn.close().await;
}

#[tokio::test]
async fn duplicate_ids_in_flight_and_oversized_lines_are_refused() {
    let mut server = tools_server();
    server.options_mut().max_message_bytes = 300;
    server.on_call_tool(|_, p| async move {
        if p.name == "wait" {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Ok(CallToolResult::text("ok"))
    });
    let mut conn = open(server).await;
    conn.send_json(&modern(1, "tools/call", json!({"name": "wait"})))
        .await
        .unwrap();
    let dup = roundtrip(&mut conn, &modern(1, "tools/call", json!({"name": "now"}))).await;
    assert_eq!(
        (dup["id"].clone(), dup["error"]["code"].clone()),
        (json!(1), json!(-32600))
    );
    let first = conn.recv_json().await.unwrap();
    assert_eq!(first["result"]["content"][0]["text"], "ok");

    let big = modern(2, "tools/call", json!({"name": "x".repeat(1000)}));
    let answer = roundtrip(&mut conn, &big).await;
    assert_eq!(answer["error"]["code"], -32600);
    assert_eq!(answer["id"], Value::Null);
    let answer = roundtrip(&mut conn, &modern(3, "tools/call", json!({"name": "now"}))).await;
    assert_eq!(answer["id"], 3, "still serving after the oversized line");
    conn.close().await;
}

#[tokio::test]
async fn eof_lets_in_flight_requests_finish() {
    let mut server = Server::new("eof");
    server.on_call_tool(|_, _| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok(CallToolResult::text("finished"))
    });
    let mut conn = open(server).await;
    conn.send_json(&modern(1, "tools/call", json!({"name": "x"})))
        .await
        .unwrap();
    conn.finish_sending().await.unwrap();
    let answer = conn.recv_json().await.expect("answered after end of input");
    assert_eq!(answer["result"]["content"][0]["text"], "finished");
    assert!(
        conn.recv().await.is_none(),
        "then the server closes its side"
    );
    conn.close().await;
}

#[tokio::test]
async fn middleware_observes_refuses_rewrites_and_answers() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut server = tools_server();
    let log = seen.clone();
    server
        .middleware(move |msg: Incoming, next: Next| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(format!("outer {}", msg.method()));
                next.run(msg).await
            }
        })
        .middleware(|mut msg: Incoming, next: Next| async move {
            match msg.method() {
                "tools/list" if msg.meta().is_some_and(|m| m.contains_key("x-deny")) => {
                    Err(McpError::new(-32001, "denied by policy"))
                }
                "tools/call" => {
                    let mut params = msg.params.to_value();
                    params["arguments"]["injected"] = json!(true);
                    msg.params.set(params);
                    next.run(msg).await
                }
                "bookshop/health" => Ok(json!({"ok": true})),
                _ => next.run(msg).await,
            }
        });
    let mut conn = open(server).await;
    handshake(&mut conn, "2025-11-25").await;
    let mut denied = request(1, "tools/list", json!({"_meta": {"x-deny": true}}));
    denied["params"]["_meta"]["x-deny"] = json!(true);
    let answer = roundtrip(&mut conn, &denied).await;
    assert_eq!(
        answer["error"],
        json!({"code": -32001, "message": "denied by policy"})
    );
    let answer = roundtrip(&mut conn, &request(2, "tools/list", json!({}))).await;
    assert_eq!(
        answer["result"]["tools"][0]["name"], "echo",
        "refusal was for that message only"
    );
    let answer = roundtrip(
        &mut conn,
        &request(
            3,
            "tools/call",
            json!({"name": "echo", "arguments": {"a": 1}}),
        ),
    )
    .await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        r#"{"a":1,"injected":true}"#
    );
    let answer = roundtrip(&mut conn, &request(4, "bookshop/health", json!({}))).await;
    assert_eq!(answer["result"], json!({"ok": true}));
    conn.close().await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "outer initialize",
            "outer notifications/initialized",
            "outer tools/list",
            "outer tools/list",
            "outer tools/call",
            "outer bookshop/health"
        ]
    );
}

#[tokio::test]
async fn a_middleware_can_strip_the_identity_stamp() {
    let mut server = tools_server();
    server.middleware(|msg: Incoming, next: Next| async move {
        let mut result = next.run(msg).await?;
        if let Some(meta) = result.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.remove("io.modelcontextprotocol/serverInfo");
        }
        Ok(result)
    });
    let client = Client::connect(server).await.unwrap();
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(listed["_meta"], json!({}));
    client.close().await;
}

fn logging_server() -> Server {
    let mut server = Server::new("logs");
    server.enable_logging().on_call_tool(|ctx, _| async move {
        ctx.log(LoggingLevel::Debug, "debug line").await?;
        ctx.log(LoggingLevel::Warning, json!({"disk": "low"}))
            .await?;
        ctx.progress(1).total(2).message("half").await;
        Ok(CallToolResult::text("done"))
    });
    server
}

#[tokio::test]
async fn logs_and_progress_on_2026_follow_the_request_meta() {
    let mut conn = open(logging_server()).await;
    // No logLevel, no progressToken: only the result.
    let answer = roundtrip(&mut conn, &modern(1, "tools/call", json!({"name": "t"}))).await;
    assert_eq!(answer["id"], 1);

    let mut call = modern(2, "tools/call", json!({"name": "t"}));
    call["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    call["params"]["_meta"]["progressToken"] = json!("tok-1");
    conn.send_json(&call).await.unwrap();
    let log = conn.recv_json().await.unwrap();
    assert_eq!(log["method"], "notifications/message");
    assert_eq!(
        log["params"],
        json!({"level": "warning", "data": {"disk": "low"}})
    );
    let progress = conn.recv_json().await.unwrap();
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(
        progress["params"],
        json!({"progressToken": "tok-1", "progress": 1, "total": 2, "message": "half"})
    );
    assert_eq!(conn.recv_json().await.unwrap()["id"], 2);

    let mut bad = modern(3, "tools/call", json!({"name": "t"}));
    bad["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("loud");
    let answer = roundtrip(&mut conn, &bad).await;
    assert_eq!(answer["error"]["code"], -32602);
    conn.close().await;
}

#[tokio::test]
async fn logs_on_2025_follow_set_level() {
    let mut conn = open(logging_server()).await;
    let init = handshake(&mut conn, "2025-11-25").await;
    assert_eq!(init["result"]["capabilities"]["logging"], json!({}));
    let answer = roundtrip(
        &mut conn,
        &request(1, "logging/setLevel", json!({"level": "error"})),
    )
    .await;
    assert_eq!(answer["result"], json!({}));
    let answer = roundtrip(&mut conn, &request(2, "tools/call", json!({"name": "t"}))).await;
    assert_eq!(answer["id"], 2, "nothing below error is sent");
    roundtrip(
        &mut conn,
        &request(3, "logging/setLevel", json!({"level": "debug"})),
    )
    .await;
    conn.send_json(&request(4, "tools/call", json!({"name": "t"})))
        .await
        .unwrap();
    let first = conn.recv_json().await.unwrap();
    assert_eq!(
        first["params"],
        json!({"level": "debug", "data": "debug line"})
    );
    assert_eq!(
        conn.recv_json().await.unwrap()["params"]["level"],
        "warning"
    );
    assert_eq!(conn.recv_json().await.unwrap()["id"], 4);
    let answer = roundtrip(
        &mut conn,
        &request(5, "logging/setLevel", json!({"level": "loud"})),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602);
    conn.close().await;
}

#[tokio::test]
async fn sessions_connect_close_and_reach_notification_handlers() {
    let events = Arc::new(Mutex::new(Vec::<String>::new()));
    let connected = Arc::new(Mutex::new(Vec::<Session>::new()));
    let mut server = tools_server();
    let (e1, e2, e3, c1) = (
        events.clone(),
        events.clone(),
        events.clone(),
        connected.clone(),
    );
    server
        .on_connect(move |s| {
            let who = s.client_info().map(|i| i.name.clone()).unwrap_or_default();
            e1.lock()
                .unwrap()
                .push(format!("connect {:?} {who}", s.era().unwrap()));
            c1.lock().unwrap().push(s);
        })
        .on_close(move |s| e2.lock().unwrap().push(format!("close {}", s.id())))
        .add_notification_handler("notifications/roots/list_changed", move |ctx, _: Value| {
            let events = e3.clone();
            async move {
                events.lock().unwrap().push(format!(
                    "roots changed in {}",
                    ctx.session().map_or("no session", |s| s.id())
                ));
                Ok(())
            }
        });

    // A 2025 session: connects once the handshake is answered, with the client's identity.
    let mut legacy = open(server.clone()).await;
    handshake(&mut legacy, "2025-11-25").await;
    // A 2026 stdio-style session: the connection, opened by its first request.
    let mut modern_conn = open(server.clone()).await;
    roundtrip(&mut modern_conn, &modern(1, "tools/list", json!({}))).await;

    for conn in [&mut legacy, &mut modern_conn] {
        conn.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}))
            .await
            .unwrap();
    }
    // A round trip on each connection makes sure the notifications were handled.
    roundtrip(&mut legacy, &request(2, "ping", json!({}))).await;
    roundtrip(&mut modern_conn, &modern(3, "tools/list", json!({}))).await;
    tokio::time::sleep(Duration::from_millis(20)).await;

    let sessions = connected.lock().unwrap().clone();
    assert_eq!(sessions.len(), 2);
    assert_ne!(sessions[0], sessions[1]);
    assert_eq!(
        sessions[0].protocol_version().as_deref(),
        Some("2025-11-25")
    );
    assert!(sessions[0].client_capabilities().roots.is_some());
    legacy.close().await;
    modern_conn.close().await;

    let events = events.lock().unwrap().clone();
    assert_eq!(events[0], "connect Legacy legacy-client");
    assert_eq!(events[1], "connect Modern test-client");
    assert!(events.contains(&format!("roots changed in {}", sessions[0].id())));
    assert!(events.contains(&format!("roots changed in {}", sessions[1].id())));
    assert!(events.contains(&format!("close {}", sessions[0].id())));
    assert!(events.contains(&format!("close {}", sessions[1].id())));
    assert!(sessions.iter().all(Session::is_closed));
}

#[tokio::test]
async fn the_lifespan_is_entered_once_and_exited_once() {
    let entered = Arc::new(AtomicUsize::new(0));
    let exited = Arc::new(AtomicUsize::new(0));
    let en = entered.clone();
    let mut server = Server::with_lifespan("life", move || {
        let en = en.clone();
        async move { Ok(en.fetch_add(1, Ordering::SeqCst) + 41) }
    });
    let ex = exited.clone();
    server
        .on_call_tool(|ctx, _| async move { Ok(CallToolResult::text(ctx.state().to_string())) })
        .on_lifespan_exit(move |state| {
            let ex = ex.clone();
            async move {
                assert_eq!(*state, 41);
                ex.fetch_add(1, Ordering::SeqCst);
            }
        });
    let client = Client::connect(server).await.unwrap();
    for _ in 0..3 {
        let r = client.call_tool("t", json!({})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("41"));
    }
    assert_eq!(
        (
            entered.load(Ordering::SeqCst),
            exited.load(Ordering::SeqCst)
        ),
        (1, 0)
    );
    client.close().await;
    assert_eq!(
        (
            entered.load(Ordering::SeqCst),
            exited.load(Ordering::SeqCst)
        ),
        (1, 1)
    );
}

#[tokio::test]
async fn the_client_has_a_verb_for_every_method_in_both_eras() {
    let mut server = tools_server();
    server
        .enable_logging()
        .on_list_resources(|_, _| async {
            Ok(ListResourcesResult::new(vec![Resource::new(
                "books://1",
                "one",
            )]))
        })
        .on_list_resource_templates(|_, _| async { Ok(ListResourceTemplatesResult::default()) })
        .on_read_resource(|_, p| async move {
            Ok(ReadResourceResult::new(vec![ResourceContents::text(
                p.uri, "Dune",
            )]))
        })
        .on_subscribe_resource(|_, _| async { Ok(EmptyResult::default()) })
        .on_unsubscribe_resource(|_, _| async { Ok(EmptyResult::default()) })
        .on_list_prompts(|_, _| async { Ok(ListPromptsResult::default()) })
        .on_get_prompt(|_, p| async move {
            Ok(GetPromptResult::new(vec![PromptMessage::new(
                Role::User,
                ContentBlock::text(p.name),
            )]))
        })
        .on_completion(|_, p| async move {
            Ok(CompleteResult::new(vec![format!("{}!", p.argument.value)]))
        });
    let caps = serde_json::to_value(server.capabilities()).unwrap();
    assert_eq!(
        caps,
        json!({
            "logging": {}, "completions": {},
            "prompts": {"listChanged": false},
            "resources": {"subscribe": true, "listChanged": false},
            "tools": {"listChanged": false}
        })
    );
    let legacy = Client::builder()
        .legacy()
        .connect(server.clone())
        .await
        .unwrap();
    legacy.ping().await.unwrap();
    legacy.set_logging_level(LoggingLevel::Info).await.unwrap();
    legacy.subscribe_resource("books://1").await.unwrap();
    legacy.unsubscribe_resource("books://1").await.unwrap();
    assert!(
        legacy.discover().await.is_err(),
        "no server/discover on 2025"
    );
    let modern_client = Client::connect(server).await.unwrap();
    assert!(modern_client.ping().await.is_err(), "no ping on 2026");
    for client in [&legacy, &modern_client] {
        assert_eq!(client.list_tools().await.unwrap().tools.len(), 1);
        assert_eq!(
            client.list_resources().await.unwrap().resources[0].uri,
            "books://1"
        );
        assert!(client
            .list_resource_templates()
            .await
            .unwrap()
            .resource_templates
            .is_empty());
        assert_eq!(
            client.read_resource("books://1").await.unwrap().contents,
            vec![ResourceContents::text("books://1", "Dune")]
        );
        assert!(client.list_prompts().await.unwrap().prompts.is_empty());
        let prompt = client
            .get_prompt("greet", Default::default())
            .await
            .unwrap();
        assert_eq!(prompt.messages[0].content.as_text(), Some("greet"));
        let done = client
            .complete(
                CompletionReference::Prompt {
                    name: "greet".into(),
                    title: None,
                },
                "name",
                "Al",
            )
            .await
            .unwrap();
        assert_eq!(done.completion.values, ["Al!"]);
    }
    assert_eq!(
        modern_client
            .discover()
            .await
            .unwrap()
            .capabilities
            .completions,
        Some(Default::default())
    );
    legacy.close().await;
    modern_client.close().await;
}

#[tokio::test]
async fn built_in_ping_and_discover_are_replaceable_and_entries_removable() {
    let mut server = tools_server();
    server
        .on_ping(|_, _| async {
            let mut meta = Meta::new();
            meta.insert("pong".into(), json!(true));
            let mut result = EmptyResult::default();
            result.meta = Some(meta);
            Ok(result)
        })
        .on_discover(|_, _| async {
            Ok(
                DiscoverResult::new(vec!["2026-07-28".into()], ServerCapabilities::default())
                    .with_instructions("custom discovery"),
            )
        })
        .remove_request_handler("tools/list");
    assert!(!server.has_request_handler("tools/list"));
    let mut conn = open(server).await;
    let answer = roundtrip(&mut conn, &modern(1, "server/discover", json!({}))).await;
    assert_eq!(answer["result"]["instructions"], "custom discovery");
    assert_eq!(
        answer["result"]["resultType"], "complete",
        "a replaced handler is still stamped"
    );
    let answer = roundtrip(&mut conn, &modern(2, "tools/list", json!({}))).await;
    assert_eq!(answer["error"]["code"], -32601);
    handshake(&mut conn, "2025-11-25").await;
    let answer = roundtrip(&mut conn, &request(3, "ping", json!({}))).await;
    assert_eq!(answer["result"], json!({"_meta": {"pong": true}}));
    conn.close().await;
}

/// A handler waiting for the client's answer to a server-to-client request must not stop the
/// reader: the answer arrives while the only slot is taken.
#[tokio::test]
async fn a_client_answer_gets_through_when_every_slot_is_taken() {
    let mut server = tools_server();
    server.options_mut().max_in_flight = 1;
    server.on_call_tool(|ctx, _| async move {
        let session = ctx
            .session()
            .ok_or_else(|| McpError::internal("no session"))?;
        let roots: ListRootsResult = session.request("roots/list", json!({})).await?;
        Ok(CallToolResult::text(format!("{} roots", roots.roots.len())))
    });
    let mut conn = open(server.clone()).await;
    handshake(&mut conn, "2025-11-25").await;
    conn.send_json(&request(1, "tools/call", json!({"name": "roots"})))
        .await
        .unwrap();
    conn.send_json(&request(2, "tools/call", json!({"name": "roots"})))
        .await
        .unwrap();
    let ask = within(conn.recv_json()).await.unwrap();
    assert_eq!(ask["method"], "roots/list");
    conn.send_json(
        &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": "file:///a"}]}}),
    )
    .await
    .unwrap();
    let done = within(conn.recv_json()).await.unwrap();
    assert_eq!(
        (
            done["id"].clone(),
            done["result"]["content"][0]["text"].clone()
        ),
        (json!(1), json!("1 roots"))
    );
    // The parked second call runs now and asks again; the peer leaves instead of answering.
    let ask = within(conn.recv_json()).await.unwrap();
    assert_eq!(ask["method"], "roots/list");
    conn.finish_sending().await.unwrap();
    let failed = within(conn.recv_json()).await.unwrap();
    assert_eq!(failed["id"], 2);
    assert_eq!(
        failed["error"]["code"], -32603,
        "the wait ends when the client is gone"
    );
    within(conn.close()).await;

    // 2026 has no server-to-client requests.
    let mut conn = RawConnection::open_with(server, true).await.unwrap();
    let answer = within(roundtrip(
        &mut conn,
        &modern(1, "tools/call", json!({"name": "roots"})),
    ))
    .await;
    assert_eq!(answer["error"]["code"], -32603);
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("only in a 2025 session"));
    conn.close().await;
}

#[tokio::test]
async fn unit_results_are_empty_objects_and_middleware_answers_are_typed_on_2026() {
    let mut server = tools_server();
    server
        .add_request_handler("bookshop/touch", |_, _: Value| async { Ok(()) })
        .unwrap();
    server.middleware(|msg: Incoming, next: Next| async move {
        if msg.method() == "bookshop/health" {
            return Ok(json!({"ok": true}));
        }
        next.run(msg).await
    });
    let mut conn = open(server).await;
    let touched = roundtrip(&mut conn, &modern(1, "bookshop/touch", json!({}))).await;
    assert_eq!(touched["result"]["resultType"], "complete");
    let health = roundtrip(&mut conn, &modern(2, "bookshop/health", json!({}))).await;
    assert_eq!(
        health["result"],
        json!({"ok": true, "resultType": "complete"})
    );
    handshake(&mut conn, "2025-11-25").await;
    let touched = roundtrip(&mut conn, &request(3, "bookshop/touch", json!({}))).await;
    assert_eq!(touched["result"], json!({}));
    conn.close().await;
}

#[tokio::test]
async fn a_progress_token_that_is_not_a_string_or_integer_is_ignored() {
    let mut conn = open(logging_server()).await;
    let mut call = modern(1, "tools/call", json!({"name": "t"}));
    call["params"]["_meta"]["progressToken"] = json!({"not": "valid"});
    let answer = roundtrip(&mut conn, &call).await;
    assert_eq!(
        answer["id"], 1,
        "no progress notification before the answer"
    );
    conn.close().await;
}

#[tokio::test]
async fn handle_message_serves_without_a_transport_even_when_the_handler_notifies() {
    let mut server = Server::new("embedded");
    server.on_call_tool(|ctx, _| async move {
        // More notifications than any small channel holds: they are dropped, not waited on.
        for i in 0..100 {
            ctx.log(LoggingLevel::Info, format!("step {i}")).await?;
        }
        Ok(CallToolResult::text("done"))
    });
    let running = modelctx::lowlevel::RunningServer::start(server)
        .await
        .unwrap();
    let mut meta = support::modern_meta();
    meta["io.modelcontextprotocol/logLevel"] = json!("debug");
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "x", "_meta": meta}});
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        running.handle_message(line.to_string().as_bytes()),
    )
    .await
    .expect("answered, not stuck on a full channel")
    .expect("a request is answered");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    let parse_error = running.handle_message(b"{oops").await.unwrap();
    assert!(parse_error.contains("-32700"), "{parse_error}");
    assert_eq!(
        running
            .handle_message(br#"{"jsonrpc":"2.0","method":"x"}"#)
            .await,
        None
    );
}

#[tokio::test]
async fn debug_output_names_the_table_and_the_request_never_the_state_or_params() {
    let mut server = Server::with_state("vault", "state-secret".to_owned());
    server
        .on_call_tool(|ctx, _| async move {
            // The context prints its request, not the call's arguments.
            let printed = format!("{ctx:?}");
            assert!(printed.contains("tools/call"), "{printed}");
            assert!(!printed.contains("arg-secret"), "{printed}");
            Ok(CallToolResult::text(printed))
        })
        .add_request_handler("vault/open", |_, _: Value| async { Ok(json!({})) })
        .unwrap();
    let printed = format!("{server:?}");
    assert!(printed.contains("name: \"vault\""), "{printed}");
    // Methods sorted, so the output is stable.
    let (call, open) = (
        printed.find("\"tools/call\"").unwrap(),
        printed.find("\"vault/open\"").unwrap(),
    );
    assert!(call < open, "{printed}");
    assert!(!printed.contains("state-secret"), "{printed}");

    let client = Client::connect(server).await.unwrap();
    let result = client
        .call_tool("any", json!({"password": "arg-secret"}))
        .await
        .unwrap();
    assert!(result.content[0]
        .as_text()
        .unwrap()
        .starts_with("RequestContext"));
    client.close().await;
}

/// Double a number.
#[modelctx::tool]
fn double(
    /// The number.
    n: i64,
) -> i64 {
    n * 2
}

/// Say it back.
#[modelctx::tool]
fn say(
    /// What to say, "quoted" or not.
    text: String,
) -> String {
    text
}

/// A whole `tools/list` is written from the page encoded when the tools changed, with the
/// 2026 stamp (its cache hints included) encoded at start; with a middleware installed it is
/// a value the middleware sees, stamped as a value. Both give the same answer, member for
/// member and in the same order, on both wires.
#[tokio::test]
async fn a_whole_tools_list_reads_the_same_with_and_without_a_middleware() {
    let build = |watched: bool| {
        let mut server = McpServer::new("lister")
            .tool(DoubleTool)
            .tool(SayTool)
            .into_server();
        server.cache_hint("tools/list", CacheHint::public(5_000));
        if watched {
            server.middleware(|msg: Incoming, next: Next| async move { next.run(msg).await });
        }
        server
    };
    let mut answers = Vec::new();
    for watched in [false, true] {
        let mut conn = open(build(watched)).await;
        conn.send_json(&modern(1, "tools/list", json!({})))
            .await
            .unwrap();
        let modern_text = conn.recv().await.expect("a 2026 answer");
        handshake(&mut conn, "2025-11-25").await;
        conn.send_json(&request(2, "tools/list", json!({})))
            .await
            .unwrap();
        let legacy_text = conn.recv().await.expect("a 2025 answer");
        answers.push((modern_text, legacy_text));
        conn.close().await;
    }
    assert_eq!(answers[0], answers[1]);
    let (modern_text, legacy_text) = &answers[0];
    let modern: Value = serde_json::from_str(modern_text).unwrap();
    let result = modern["result"].as_object().expect("a result");
    let members: Vec<&str> = result.keys().map(String::as_str).collect();
    assert_eq!(
        members,
        ["tools", "resultType", "ttlMs", "cacheScope", "_meta"]
    );
    assert_eq!(result["ttlMs"], 5_000);
    assert_eq!(result["cacheScope"], "public");
    let names: Vec<&str> = result["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["double", "say"]);
    let legacy: Value = serde_json::from_str(legacy_text).unwrap();
    let members: Vec<&String> = legacy["result"]
        .as_object()
        .expect("a result")
        .keys()
        .collect();
    assert_eq!(members, ["tools"], "no 2026 stamp on the 2025 wire");
    assert_eq!(legacy["result"]["tools"].as_array().map(Vec::len), Some(2));
}
