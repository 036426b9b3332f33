//! Bad input over the real transports: a table of more than 40 kinds of malformed, hostile or
//! abusive input, sent to the `torture` example over stdio (a child process) and to the same
//! server over Streamable HTTP on 127.0.0.1. For each: the exact JSON-RPC code (or no answer at
//! all, or the exact HTTP status), nothing internal on the wire, and the server still answers a
//! valid request afterwards.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use support::example;

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/torture.rs"]
#[allow(dead_code)]
mod torture;

/// Text that must never reach the wire: panic messages, source paths, Rust type names.
const LEAKS: &[&str] = &[
    "panicked",
    "boom",
    "secret",
    ".rs",
    "src/",
    "modelctx_core::",
    "McpServer",
    "RUST_BACKTRACE",
    "thread '",
    "serde_json",
];

fn assert_no_leak(case: &str, text: &str) {
    for leak in LEAKS {
        assert!(
            !text.contains(leak),
            "{case}: {leak:?} leaked onto the wire: {text:.300}"
        );
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn call(id: Value, tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args, "_meta": meta()}})
    .to_string()
}

/// What a bad line must produce.
#[derive(Debug, Clone)]
enum Expect {
    /// One error response with this code (and this id; `Null` for an unreadable one), refused
    /// before any handler ran (HTTP 400, or 404 for an unknown method).
    Error(i64, Value),
    /// One error response from the handler itself (HTTP 200, like any answered request).
    HandlerError(i64, Value),
    /// Nothing at all.
    Silence,
    /// One result; the check names what it must hold.
    Result(fn(&Value) -> bool, &'static str),
}

struct Case {
    name: &'static str,
    line: Vec<u8>,
    expect: Expect,
}

fn case(name: &'static str, line: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        name,
        line: line.into(),
        expect,
    }
}

fn nested(depth: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"x":{}{}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// The cases every transport shares: one JSON-RPC message (or non-message) each.
fn message_cases() -> Vec<Case> {
    use Expect::*;
    let n = Value::Null;
    vec![
        case("malformed JSON", r#"{"jsonrpc": "2.0", "id": 1, "method": }"#, Error(-32700, n.clone())),
        case("truncated JSON", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#, Error(-32700, n.clone())),
        case("invalid UTF-8", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}".to_vec(), Error(-32700, n.clone())),
        case("lone surrogate escape in the method", r#"{"jsonrpc":"2.0","id":1,"method":"\ud800"}"#, Error(-32600, json!(1))),
        case("NaN literal", r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}"#, Error(-32700, n.clone())),
        case("Infinity literal", r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":Infinity}}"#, Error(-32700, n.clone())),
        case("trailing garbage", r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#, Error(-32700, n.clone())),
        case("10,000-level nesting in params", nested(10_000), Error(-32602, json!(1))),
        case("10,000-level nesting", "[".repeat(10_000), Error(-32700, n.clone())),
        case("empty batch", "[]", Error(-32600, n.clone())),
        case("batch of one", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Error(-32600, n.clone())),
        case("a number", "42", Error(-32600, n.clone())),
        case("a string", r#""hello""#, Error(-32600, n.clone())),
        case("null", "null", Error(-32600, n.clone())),
        case("null id", r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, Error(-32600, n.clone())),
        case("object id", r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, Error(-32600, n.clone())),
        case("array id", r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, Error(-32600, n.clone())),
        case("boolean id", r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, Error(-32600, n.clone())),
        case("fractional id", r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Error(-32600, n.clone())),
        case("id beyond u64", r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#, Error(-32600, n.clone())),
        case("missing jsonrpc", r#"{"id":3,"method":"tools/list"}"#, Error(-32600, json!(3))),
        case("jsonrpc 1.0", r#"{"jsonrpc":"1.0","id":4,"method":"tools/list"}"#, Error(-32600, json!(4))),
        case("jsonrpc as a number", r#"{"jsonrpc":2.0,"id":5,"method":"tools/list"}"#, Error(-32600, json!(5))),
        case("method not a string", r#"{"jsonrpc":"2.0","id":6,"method":7}"#, Error(-32600, json!(6))),
        case("no method, no result", r#"{"jsonrpc":"2.0","id":8}"#, Error(-32600, json!(8))),
        case("params an array", r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":[1,2]}"#, Error(-32602, json!(9))),
        // `params` is absent or an object: a scalar or null breaks JSON-RPC itself (-32600), an
        // array is valid JSON-RPC but not MCP's named params (-32602).
        case("params a string", r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":"x"}"#, Error(-32600, json!(10))),
        case("params null", r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":null}"#, Error(-32600, json!(10))),
        case("array read by position", r#"["2.0", 10, "tools/list"]"#, Error(-32600, n.clone())),
        case("no _meta and no session", r#"{"jsonrpc":"2.0","id":11,"method":"tools/list"}"#, Error(-32602, json!(11))),
        case("unsupported protocol version", json!({"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}}).to_string(), Error(-32022, json!(12))),
        case("_meta without capabilities", json!({"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}).to_string(), Error(-32602, json!(13))),
        case("unknown method", json!({"jsonrpc":"2.0","id":14,"method":"no/such","params":{"_meta":meta()}}).to_string(), Error(-32601, json!(14))),
        case("method removed in 2026", json!({"jsonrpc":"2.0","id":15,"method":"resources/subscribe","params":{"_meta":meta(),"uri":"x://y"}}).to_string(), Error(-32601, json!(15))),
        case("tools/call arguments a string", json!({"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"_meta":meta(),"name":"add","arguments":"x"}}).to_string(), HandlerError(-32602, json!(16))),
        case("tools/call without a name", json!({"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"_meta":meta()}}).to_string(), HandlerError(-32602, json!(17))),
        case("unknown tool", call(json!(18), "nope", json!({})), Result(|v| v["isError"] == true && v["content"][0]["text"] == "Unknown tool: nope", "isError: Unknown tool: nope")),
        case("arguments of the wrong type", call(json!(19), "add", json!({"a": "one", "b": 2})), Result(|v| v["isError"] == true && v["content"][0]["text"].as_str().is_some_and(|t| t.contains("a: \"one\" is not of type \"integer\"")), "isError naming the argument")),
        case("arguments beyond i64", call(json!(20), "add", json!({"a": 1e30, "b": 2})), Result(|v| v["isError"] == true, "isError")),
        case("unknown argument", call(json!(21), "add", json!({"a": 1, "b": 2, "c": 3})), Result(|v| v["isError"] == true, "isError")),
        case("a panicking tool", call(json!(22), "panic", json!({})), Result(|v| v["isError"] == true && v["content"][0]["text"] == "Error executing tool panic", "isError: Error executing tool panic")),
        case("control characters and NUL in strings", call(json!(23), "echo", json!({"text": "a\u{0}b\u{1b}[2J\u{7f}"})), Result(|v| v["content"][0]["text"] == "a\u{0}b\u{1b}[2J\u{7f}", "echoed exactly")),
        case("a huge result", call(json!(24), "huge", json!({})), Result(|v| v["content"][0]["text"].as_str().map(str::len) == Some(8 * 1024 * 1024), "8 MiB of text")),
        case("notification of an unknown method", r#"{"jsonrpc":"2.0","method":"no/such"}"#, Silence),
        case("notification with bad params", r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}"#, Silence),
        case("notification without jsonrpc", r#"{"method":"notifications/initialized"}"#, Silence),
        case("cancellation of an unknown request", r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nobody"}}"#, Silence),
        case("a response nobody asked for", r#"{"jsonrpc":"2.0","id":99,"result":{}}"#, Silence),
        case("an error response nobody asked for", r#"{"jsonrpc":"2.0","id":98,"error":{"code":1,"message":"x"}}"#, Silence),
    ]
}

// ---------------------------------------------------------------- stdio

struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_probe: i64,
}

impl StdioServer {
    fn spawn() -> Self {
        let mut child = Command::new(example("torture"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the example starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
        Self {
            child,
            stdin,
            stdout,
            next_probe: 1_000_000,
        }
    }

    async fn write(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn line(&mut self) -> String {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(20), self.stdout.read_line(&mut line))
            .await
            .expect("a line within 20 s")
            .expect("readable stdout");
        assert!(n > 0, "the server closed stdout");
        line
    }

    /// Sends a valid request and returns every other line written until its answer (and, when
    /// `also` names an id, until that id's answer too: requests are served concurrently, so
    /// their answers may come in any order).
    async fn probe(&mut self, also: Option<&Value>) -> Vec<String> {
        let mut lines = self.probe_once().await;
        if let Some(id) = also.filter(|id| !id.is_null()) {
            let seen = |lines: &[String]| {
                lines
                    .iter()
                    .any(|l| serde_json::from_str::<Value>(l).is_ok_and(|m| m["id"] == *id))
            };
            while !seen(&lines) {
                lines.push(self.line().await);
            }
        }
        lines
    }

    async fn probe_once(&mut self) -> Vec<String> {
        self.next_probe += 1;
        let id = self.next_probe;
        self.write(format!("{}\n", call(json!(id), "add", json!({"a": 2, "b": 3}))).as_bytes())
            .await;
        let mut before = Vec::new();
        loop {
            let line = self.line().await;
            let msg: Value = serde_json::from_str(&line).expect("stdout carries only JSON");
            if msg["id"] == id {
                assert_eq!(
                    msg["result"]["structuredContent"], 5,
                    "the server still serves"
                );
                return before;
            }
            before.push(line);
        }
    }
}

fn check(case: &str, lines: &[String], expect: &Expect) {
    for line in lines {
        assert_no_leak(case, line);
    }
    match expect {
        Expect::Silence => assert!(
            lines.is_empty(),
            "{case}: expected no answer, got {lines:?}"
        ),
        Expect::Error(code, id) | Expect::HandlerError(code, id) => {
            assert_eq!(lines.len(), 1, "{case}: expected one answer, got {lines:?}");
            let msg: Value = serde_json::from_str(&lines[0]).unwrap();
            assert_eq!(msg["error"]["code"], *code, "{case}: {msg}");
            assert_eq!(msg["id"], *id, "{case}: {msg}");
        }
        Expect::Result(ok, what) => {
            assert_eq!(
                lines.len(),
                1,
                "{case}: expected one answer, got {} lines",
                lines.len()
            );
            let msg: Value = serde_json::from_str(&lines[0]).unwrap();
            assert!(
                ok(&msg["result"]),
                "{case}: expected {what}, got {:.300}",
                msg.to_string()
            );
        }
    }
}

#[tokio::test]
async fn every_kind_of_bad_input_over_stdio() {
    let mut cases = message_cases();
    use Expect::*;
    cases.extend([
        case(
            "8 MB string (over the 4 MiB message limit)",
            call(json!(30), "echo", json!({"text": "y".repeat(8_000_000)})),
            Error(-32600, Value::Null),
        ),
        case(
            "CRLF line ending",
            format!("{}\r", call(json!(31), "add", json!({"a": 1, "b": 1}))),
            Result(|v| v["structuredContent"] == 2, "2"),
        ),
        case("blank lines", "\n\n  \n\t", Silence),
    ]);
    let mut server = StdioServer::spawn();
    for c in &cases {
        let mut bytes = c.line.clone();
        bytes.push(b'\n');
        server.write(&bytes).await;
        let also = match &c.expect {
            Expect::Error(_, id) | Expect::HandlerError(_, id) => Some(id.clone()),
            Expect::Result(..) => serde_json::from_slice::<Value>(&c.line)
                .ok()
                .map(|m| m["id"].clone()),
            Expect::Silence => None,
        };
        let lines = server.probe(also.as_ref()).await;
        check(c.name, &lines, &c.expect);
    }
    assert!(cases.len() >= 40, "{} kinds", cases.len());

    // A handler that never returns: cancelled, it is never answered and the server goes on.
    server
        .write(format!("{}\n", call(json!("h1"), "hang", json!({}))).as_bytes())
        .await;
    let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h1","reason":"test"}});
    server.write(format!("{cancel}\n").as_bytes()).await;
    let lines = server.probe(None).await;
    assert!(
        lines.is_empty(),
        "a cancelled request is never answered: {lines:?}"
    );

    // End of input: the server drains and exits cleanly, nothing on stderr but logs.
    drop(server.stdin);
    let mut rest = String::new();
    server.stdout.read_to_string(&mut rest).await.unwrap();
    assert_eq!(rest, "", "nothing after the last answer");
    let status = tokio::time::timeout(Duration::from_secs(10), server.child.wait())
        .await
        .expect("exits at end of input")
        .unwrap();
    assert!(status.success());
}

// ---------------------------------------------------------------- HTTP

struct Reply {
    status: u16,
    body: String,
}

async fn http(port: u16, raw: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    // The server may answer (413) and close before reading a huge body: a failed write is
    // fine as long as the answer arrives.
    let _ = stream.write_all(raw).await;
    let mut bytes = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut bytes))
        .await
        .expect("an answer within 20 s");
    // A reset after the answer arrived (unread body) still leaves the answer in `bytes`.
    assert!(read.is_ok() || !bytes.is_empty(), "{read:?}");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Reply { status, body }
}

fn post(port: u16, extra_headers: &str, body: &[u8]) -> Vec<u8> {
    let version = if extra_headers.contains("MCP-Protocol-Version") {
        ""
    } else {
        "MCP-Protocol-Version: 2026-07-28\r\n"
    };
    let mut raw = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{version}{extra_headers}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(body);
    raw
}

/// The JSON-RPC message of a reply: a JSON body, or the `data:` of an SSE body.
fn message(body: &str) -> Option<Value> {
    serde_json::from_str(body.trim()).ok().or_else(|| {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str(d.trim()).ok())
    })
}

/// A valid call with its routing headers; the server must still answer it.
async fn http_probe(port: u16) {
    let body = call(json!(777), "add", json!({"a": 2, "b": 3}));
    let reply = http(
        port,
        &post(
            port,
            "Mcp-Method: tools/call\r\nMcp-Name: add\r\n",
            body.as_bytes(),
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        message(&reply.body).unwrap()["result"]["structuredContent"],
        5
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_bad_input_over_http() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut config = modelctx::transport::HttpConfig::default();
    config.body_timeout = Duration::from_secs(1);
    tokio::spawn(torture::server().serve_http_on(listener, config, std::future::pending()));

    // The JSON-RPC cases, one POST each: errors map to HTTP statuses.
    for c in message_cases() {
        let (method, name) = match serde_json::from_slice::<Value>(&c.line) {
            Ok(v) => (
                v["method"].as_str().unwrap_or("").to_owned(),
                v["params"]["name"].as_str().unwrap_or("").to_owned(),
            ),
            Err(_) => (String::new(), String::new()),
        };
        let version = serde_json::from_slice::<Value>(&c.line).ok().and_then(|v| {
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
                .as_str()
                .map(str::to_owned)
        });
        let mut headers = String::new();
        if let Some(version) = version {
            headers.push_str(&format!("MCP-Protocol-Version: {version}\r\n"));
        }
        if !method.is_empty() {
            headers.push_str(&format!("Mcp-Method: {method}\r\n"));
        }
        if !name.is_empty() {
            headers.push_str(&format!("Mcp-Name: {name}\r\n"));
        }
        let reply = http(port, &post(port, &headers, &c.line)).await;
        assert_no_leak(c.name, &reply.body);
        // Over HTTP a tools/call must name its tool in `Mcp-Name` too: refused before dispatch.
        let expect = match c.name {
            "tools/call without a name" => Expect::Error(-32020, json!(17)),
            // A malformed notification is not accepted: 400 with an id-less error (stdio stays
            // silent, having no status to give).
            "notification with bad params" => Expect::Error(-32602, Value::Null),
            "notification without jsonrpc" => Expect::Error(-32600, Value::Null),
            // A response outside any session answers nothing: not accepted.
            "a response nobody asked for" | "an error response nobody asked for" => {
                Expect::Error(-32600, Value::Null)
            }
            _ => c.expect.clone(),
        };
        match &expect {
            Expect::Silence => {
                assert_eq!(reply.status, 202, "{}: {}", c.name, reply.body);
            }
            Expect::Error(code, _) => {
                let expected_status = match code {
                    -32601 => 404,
                    _ => 400,
                };
                assert_eq!(reply.status, expected_status, "{}: {}", c.name, reply.body);
                let msg = message(&reply.body)
                    .unwrap_or_else(|| panic!("{}: a JSON-RPC body: {}", c.name, reply.body));
                assert_eq!(msg["error"]["code"], *code, "{}: {msg}", c.name);
            }
            Expect::HandlerError(code, _) => {
                assert_eq!(reply.status, 200, "{}: {}", c.name, reply.body);
                let msg = message(&reply.body).expect("a JSON-RPC body");
                assert_eq!(msg["error"]["code"], *code, "{}: {msg}", c.name);
            }
            Expect::Result(ok, what) => {
                assert_eq!(reply.status, 200, "{}", c.name);
                let msg = message(&reply.body).expect("a JSON-RPC body");
                assert!(ok(&msg["result"]), "{}: expected {what}", c.name);
            }
        }
        http_probe(port).await;
    }

    // HTTP-level abuse: exact statuses.
    let host = format!("127.0.0.1:{port}");
    let ok_body = call(json!(1), "add", json!({"a": 1, "b": 1}));
    let routed = "Mcp-Method: tools/call\r\nMcp-Name: add\r\n";
    let raw = |text: String| text.into_bytes();
    let http_cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("PUT", raw(format!("PUT /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")), 405),
        ("PATCH", raw(format!("PATCH /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")), 405),
        ("GET without a session", raw(format!("GET /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nAccept: text/event-stream\r\n\r\n")), 405),
        ("DELETE without a session", raw(format!("DELETE /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")), 405),
        ("text/plain body", raw(format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: text/plain\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{ok_body}", ok_body.len())), 415),
        ("no Content-Type", raw(format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{ok_body}", ok_body.len())), 415),
        ("Accept taking neither JSON nor SSE", raw(format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: text/html\r\nMCP-Protocol-Version: 2026-07-28\r\n{routed}Content-Length: {}\r\n\r\n{ok_body}", ok_body.len())), 406),
        // No Accept header means anything is acceptable (HTTP): answered as JSON.
        ("no Accept", raw(format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n{routed}Content-Length: {}\r\n\r\n{ok_body}", ok_body.len())), 200),
        ("GET with a bogus session id", raw(format!("GET /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nAccept: text/event-stream\r\nMcp-Session-Id: x\r\n\r\n")), 404),
        ("DELETE with a bogus session id", raw(format!("DELETE /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nMcp-Session-Id: x\r\n\r\n")), 404),
        ("hostile Host", raw(format!("POST /mcp HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{ok_body}", ok_body.len())), 403),
        ("hostile Origin", post(port, &format!("Origin: http://evil.example\r\n{routed}"), ok_body.as_bytes()), 403),
        ("opaque null Origin", post(port, &format!("Origin: null\r\n{routed}"), ok_body.as_bytes()), 403),
        ("bogus session id", post(port, "Mcp-Session-Id: not-a-session\r\nMCP-Protocol-Version: 2025-11-25\r\n", br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#), 404),
        ("oversize body", post(port, routed, &vec![b' '; 5 * 1024 * 1024]), 413),
        ("header naming another method", post(port, "Mcp-Method: prompts/list\r\nMcp-Name: add\r\n", ok_body.as_bytes()), 400),
        ("empty body", post(port, "", b""), 400),
    ];
    for (name, request, status) in http_cases {
        let reply = http(port, &request).await;
        assert_eq!(reply.status, status, "{name}: {}", reply.body);
        assert_no_leak(name, &reply.body);
        http_probe(port).await;
    }

    // A slow body: headers, half the body, then nothing. Others are served meanwhile; the slow
    // one gets 408 once the body timeout passes.
    let mut slow = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let request = post(port, routed, ok_body.as_bytes());
    slow.write_all(&request[..request.len() - 10])
        .await
        .unwrap();
    http_probe(port).await;
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut bytes))
        .await
        .expect("the slow request is ended")
        .unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");

    // A handler that never returns, abandoned by its client: the server goes on.
    let mut hung = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let body = call(json!(5), "hang", json!({}));
    hung.write_all(&post(
        port,
        "Mcp-Method: tools/call\r\nMcp-Name: hang\r\n",
        body.as_bytes(),
    ))
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let dropped_before = torture::HANGS_DROPPED.load(std::sync::atomic::Ordering::SeqCst);
    drop(hung);
    http_probe(port).await;
    // The request was cancelled (its handler dropped), not left running forever.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while torture::HANGS_DROPPED.load(std::sync::atomic::Ordering::SeqCst) == dropped_before {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the abandoned handler still runs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
