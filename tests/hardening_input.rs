//! Wrong answers to bad input, fixed in the engine and the high-level server (issue 12), each
//! checked over stdio against a child process (`torture` or `bookshop` example): the exact
//! JSON-RPC code, a bounded answer and a bounded server (`VmHWM` of the child), and a normal
//! call served afterwards.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use support::{example, modern, modern_meta, request};

/// The most a child server may hold at its peak while these tests attack it, in KiB. A debug
/// build of an example idles at about 10 MiB; the largest input sent here is 1 MB.
const PEAK_KIB: u64 = 64 * 1024;

/// The longest answer line any of these bad inputs may get back, in bytes.
const MAX_ANSWER_BYTES: usize = 1024;

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    probes: i64,
}

impl Server {
    fn spawn(name: &str) -> Self {
        let mut child = Command::new(example(name))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the example starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Self {
            child,
            stdin,
            stdout,
            probes: 1_000,
        }
    }

    async fn send_text(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn send(&mut self, message: &Value) {
        self.send_text(&message.to_string()).await;
    }

    /// The next line the server writes, and its length.
    async fn recv_sized(&mut self) -> (Value, usize) {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(10), self.stdout.read_line(&mut line))
            .await
            .expect("an answer within 10 s")
            .expect("readable stdout");
        assert!(n > 0, "the server closed stdout");
        (serde_json::from_str(&line).expect("JSON on stdout"), n)
    }

    async fn recv(&mut self) -> Value {
        self.recv_sized().await.0
    }

    async fn roundtrip_text(&mut self, line: &str) -> Value {
        self.send_text(line).await;
        self.recv().await
    }

    async fn roundtrip(&mut self, message: &Value) -> Value {
        self.send(message).await;
        self.recv().await
    }

    /// The 2025 handshake.
    async fn initialize(&mut self) {
        let answer = self
            .roundtrip(&request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "hardening", "version": "0"}}),
            ))
            .await;
        assert_eq!(
            answer["result"]["protocolVersion"], "2025-11-25",
            "{answer}"
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// A normal `tools/list` is still answered (2026 envelope unless `legacy`).
    async fn still_serves(&mut self, legacy: bool) {
        self.probes += 1;
        let line = match legacy {
            true => request(self.probes, "tools/list", json!({})),
            false => modern(self.probes, "tools/list", json!({})),
        };
        let answer = self.roundtrip(&line).await;
        assert_eq!(answer["id"], self.probes, "{answer}");
        assert!(
            answer["result"]["tools"]
                .as_array()
                .is_some_and(|t| !t.is_empty()),
            "the server still serves: {answer}"
        );
    }

    /// The child's peak resident set, in KiB.
    fn peak_kib(&self) -> u64 {
        let pid = self.child.id().expect("the child runs");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
        status
            .lines()
            .find(|l| l.starts_with("VmHWM"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .expect("VmHWM")
    }

    fn assert_bounded(&self) {
        let peak = self.peak_kib();
        assert!(peak < PEAK_KIB, "the server peaked at {peak} KiB");
    }
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error answer: {answer}"))
}

fn message(answer: &Value) -> &str {
    answer["error"]["message"].as_str().unwrap_or_default()
}

fn tool_text(answer: &Value) -> &str {
    assert_eq!(
        answer["result"]["isError"], true,
        "an isError result: {answer}"
    );
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

fn call_params(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

#[tokio::test]
async fn a_json_array_is_never_served_as_a_request() {
    let mut server = Server::spawn("torture");
    let meta = modern_meta().to_string();
    // By position, this array reads as a valid tools/list request: it must not be served.
    for line in [
        r#"["2.0", 5, "tools/list"]"#.to_owned(),
        format!(r#"["2.0", 6, "tools/list", {{"_meta": {meta}}}]"#),
        format!(
            r#"[{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{"_meta":{meta}}}}}]"#
        ),
        "[]".to_owned(),
    ] {
        let answer = server.roundtrip_text(&line).await;
        assert_eq!(code(&answer), -32600, "{line}: {answer}");
        assert_eq!(answer["id"], Value::Null, "{line}: {answer}");
        assert!(
            message(&answer).contains("batches are not supported"),
            "{answer}"
        );
    }
    for line in [r#""tools/list""#, "5", "true", "null"] {
        let answer = server.roundtrip_text(line).await;
        assert_eq!(code(&answer), -32600, "{line}: {answer}");
        assert_eq!(answer["id"], Value::Null, "{line}: {answer}");
    }
    // Not JSON at all stays a parse error.
    let answer = server.roundtrip_text(r#"["2.0", 5"#).await;
    assert_eq!(code(&answer), -32700, "{answer}");
    server.still_serves(false).await;
    server.assert_bounded();
}

#[tokio::test]
async fn params_are_absent_or_an_object_in_both_eras() {
    let meta = modern_meta();
    // 2026: every request carries its envelope in params, so null params cannot be served.
    let mut server = Server::spawn("torture");
    for (params, expected) in [
        (json!(null), -32600),
        (json!("x"), -32600),
        (json!(5), -32600),
        (json!(false), -32600),
        (json!([meta.clone()]), -32602),
        (json!([1, 2]), -32602),
    ] {
        let answer = server
            .roundtrip(
                &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": params}),
            )
            .await;
        assert_eq!(code(&answer), expected, "params {params}: {answer}");
        assert_eq!(answer["id"], 3, "{answer}");
    }
    server.still_serves(false).await;

    // 2025: the same rule inside an initialized session.
    let mut server = Server::spawn("torture");
    server.initialize().await;
    for (method, params, expected) in [
        ("ping", json!(null), -32600),
        ("tools/list", json!(null), -32600),
        ("tools/list", json!("x"), -32600),
        ("tools/list", json!([1, 2]), -32602),
        ("ping", json!([]), -32602),
    ] {
        let answer = server
            .roundtrip(&json!({"jsonrpc": "2.0", "id": 4, "method": method, "params": params}))
            .await;
        assert_eq!(
            code(&answer),
            expected,
            "{method} params {params}: {answer}"
        );
        assert_eq!(answer["id"], 4, "{answer}");
    }
    // Absent params are `{}`.
    let answer = server
        .roundtrip(&json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}))
        .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    server.still_serves(true).await;
    server.assert_bounded();
}

#[tokio::test]
async fn tool_arguments_that_are_not_an_object_are_invalid_params_in_both_eras() {
    let mut modern_server = Server::spawn("bookshop");
    let mut legacy_server = Server::spawn("bookshop");
    legacy_server.initialize().await;
    for arguments in [json!(null), json!("x"), json!([1]), json!(7)] {
        let params = call_params("search_books", arguments.clone());
        let answer = modern_server
            .roundtrip(&modern(8, "tools/call", params.clone()))
            .await;
        assert_eq!(
            code(&answer),
            -32602,
            "2026, arguments {arguments}: {answer}"
        );
        assert!(message(&answer).contains("arguments"), "{answer}");
        let answer = legacy_server
            .roundtrip(&request(8, "tools/call", params))
            .await;
        assert_eq!(
            code(&answer),
            -32602,
            "2025, arguments {arguments}: {answer}"
        );
        assert!(message(&answer).contains("arguments"), "{answer}");
    }
    // Absent arguments are `{}`: the tool's own schema then names what is missing.
    let answer = modern_server
        .roundtrip(&modern(9, "tools/call", json!({"name": "search_books"})))
        .await;
    assert_eq!(tool_text(&answer), "\"query\" is a required property");
    let answer = modern_server
        .roundtrip(&modern(
            10,
            "tools/call",
            call_params("search_books", json!({"query": "x"})),
        ))
        .await;
    assert!(answer["result"]["isError"] != true, "{answer}");
    modern_server.still_serves(false).await;
    legacy_server.still_serves(true).await;
    modern_server.assert_bounded();
}

#[tokio::test]
async fn echoed_values_are_capped() {
    let mut server = Server::spawn("torture");
    let big = "n".repeat(1_000_000);
    let cut = format!("{}… (1000000 bytes)", "n".repeat(256));

    // An unknown tool.
    server
        .send(&modern(11, "tools/call", call_params(&big, json!({}))))
        .await;
    let (answer, size) = server.recv_sized().await;
    assert!(size < MAX_ANSWER_BYTES, "a {size}-byte answer");
    assert_eq!(tool_text(&answer), format!("Unknown tool: {cut}"));

    // An unknown method.
    server.send(&modern(12, &big, json!({}))).await;
    let (answer, size) = server.recv_sized().await;
    assert!(size < MAX_ANSWER_BYTES, "a {size}-byte answer");
    assert_eq!(code(&answer), -32601);
    assert_eq!(message(&answer), format!("Method not found: {cut}"));

    // An unsupported protocol version (quoted in the message and in `data.requested`).
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!(big);
    server
        .send(&request(13, "tools/list", json!({"_meta": meta})))
        .await;
    let (answer, size) = server.recv_sized().await;
    assert!(size < MAX_ANSWER_BYTES, "a {size}-byte answer");
    assert_eq!(code(&answer), -32022);
    assert_eq!(answer["error"]["data"]["requested"], json!(cut));

    // Invalid params whose reason quotes the input (serde quotes the whole string).
    server
        .send(&modern(
            14,
            "tools/call",
            json!({"name": "add", "task": big}),
        ))
        .await;
    let (answer, size) = server.recv_sized().await;
    assert!(size < MAX_ANSWER_BYTES, "a {size}-byte answer");
    assert_eq!(code(&answer), -32602);
    assert!(
        message(&answer).starts_with("Invalid params: invalid type: string \"nnnn"),
        "{answer}"
    );
    assert!(message(&answer).ends_with(" bytes)"), "{answer}");

    // A schema complaint quoting an unexpected argument's name.
    server
        .send(&modern(
            15,
            "tools/call",
            call_params("add", json!({"a": 1, "b": 2, big.clone(): 1})),
        ))
        .await;
    let (answer, size) = server.recv_sized().await;
    assert!(size < MAX_ANSWER_BYTES, "a {size}-byte answer: {answer}");
    assert!(tool_text(&answer).contains("bytes)"), "{answer}");

    server.still_serves(false).await;
    server.assert_bounded();
}

#[tokio::test]
async fn out_of_range_integers_are_quoted_as_written() {
    // Checked by the tool's schema (`limit` is 1 to 50).
    let mut bookshop = Server::spawn("bookshop");
    for (written, rule) in [
        ("18446744073709551616", "is greater than the maximum of 50"),
        ("-99999999999999999999", "is less than the minimum of 1"),
    ] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{{"name":"search_books","arguments":{{"query":"x","limit":{written}}},"_meta":{}}}}}"#,
            modern_meta()
        );
        let answer = bookshop.roundtrip_text(&line).await;
        assert_eq!(
            tool_text(&answer),
            format!("limit: {written} {rule}"),
            "{answer}"
        );
    }
    bookshop.still_serves(false).await;

    // Refused when the argument is decoded (an `i64` the schema calls an integer).
    let mut torture = Server::spawn("torture");
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{{"name":"add","arguments":{{"a":18446744073709551616,"b":1}},"_meta":{}}}}}"#,
        modern_meta()
    );
    let answer = torture.roundtrip_text(&line).await;
    assert_eq!(
        tool_text(&answer),
        "a: invalid type: floating point `18446744073709551616`, expected i64"
    );
    torture.still_serves(false).await;
    torture.assert_bounded();
}

#[tokio::test]
async fn a_2025_session_keeps_its_era() {
    let mut server = Server::spawn("torture");
    server.initialize().await;
    // A request with a 2026 envelope inside the 2025 session is refused, whatever its method.
    for (id, method) in [(20, "tools/list"), (21, "server/discover"), (22, "ping")] {
        let answer = server.roundtrip(&modern(id, method, json!({}))).await;
        assert_eq!(code(&answer), -32600, "{method}: {answer}");
        assert_eq!(answer["id"], id, "{answer}");
        assert!(message(&answer).contains("2025-11-25 session"), "{answer}");
    }
    // A tool call with an envelope does not run either.
    let answer = server
        .roundtrip(&modern(
            23,
            "tools/call",
            call_params("add", json!({"a": 1, "b": 2})),
        ))
        .await;
    assert_eq!(code(&answer), -32600, "{answer}");
    // A notification with an envelope is never answered; the session goes on in 2025.
    server
        .send(
            &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"_meta": modern_meta(), "progressToken": 1, "progress": 1}}),
        )
        .await;
    let answer = server
        .roundtrip(&request(24, "tools/list", json!({})))
        .await;
    assert_eq!(answer["id"], 24, "{answer}");
    assert!(
        answer["result"].get("resultType").is_none(),
        "served as 2025: {answer}"
    );
    server.still_serves(true).await;
    server.assert_bounded();

    // The other way round a connection may fall back: a 2026 probe, then `initialize`.
    let mut server = Server::spawn("torture");
    server.still_serves(false).await;
    server.initialize().await;
    server.still_serves(true).await;
}

/// A `torture --http 127.0.0.1:0` child and its port.
async fn http_child() -> (Child, u16) {
    let mut child = Command::new(example("torture"))
        .args(["--http", "127.0.0.1:0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the example starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut url = String::new();
    tokio::time::timeout(Duration::from_secs(10), stdout.read_line(&mut url))
        .await
        .expect("the address within 10 s")
        .expect("readable stdout");
    let port = url
        .trim()
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("an address: {url:?}"));
    (child, port)
}

#[tokio::test]
async fn a_2025_http_session_keeps_its_era() {
    let (child, port) = http_child().await;
    let sid = support::sse::open_session(port, json!({})).await;
    // The headers say 2025 and name the session; the body's envelope says 2026.
    let answer = support::sse::session_call(port, &sid, &modern(30, "tools/list", json!({}))).await;
    assert_eq!(code(&answer), -32600, "{answer}");
    assert_eq!(answer["id"], 30, "{answer}");
    // An array is refused over HTTP as over stdio.
    let reply = support::raw_http::send(
        port,
        "POST",
        &[
            ("Mcp-Session-Id", &sid),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        r#"["2.0", 31, "tools/list"]"#,
    )
    .await;
    assert_eq!(code(&reply.json()), -32600, "{}", reply.json());
    // The session still serves.
    let answer =
        support::sse::session_call(port, &sid, &request(32, "tools/list", json!({}))).await;
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    let pid = child.id().expect("the child runs");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let peak: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .expect("VmHWM");
    assert!(peak < PEAK_KIB, "the server peaked at {peak} KiB");
}
