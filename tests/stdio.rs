//! The stdio transport for real: an example runs as a child process and is driven in both eras.

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use support::{example, modern, request};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

impl Peer {
    fn spawn(name: &str) -> Self {
        Self::spawn_with(name, &[])
    }

    fn spawn_with(name: &str, env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(example(name))
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("example starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Self {
            child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{msg}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.stdout.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("stdout carries only JSON-RPC, got {line}"))
    }

    async fn call(&mut self, msg: Value) -> Value {
        self.send(&msg).await;
        let answer = self.recv().await;
        assert_eq!(answer["id"], msg["id"]);
        answer
    }

    /// Closes stdin and expects a clean exit with nothing more on stdout.
    async fn finish(mut self) {
        drop(self.stdin.take());
        let rest = tokio::time::timeout(Duration::from_secs(10), self.stdout.next_line())
            .await
            .expect("stdout closes")
            .unwrap();
        assert_eq!(rest, None, "nothing after the last answer");
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("the server exits on end of input")
            .unwrap();
        assert!(status.success(), "exit status {status}");
    }
}

#[tokio::test]
async fn a_2025_client_drives_the_example_over_stdio() {
    let mut peer = Peer::spawn("lowlevel_one_tool");
    let init = peer
        .call(request(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "stdio-test", "version": "1"}
            }),
        ))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        init["result"]["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    let listed = peer.call(request(2, "tools/list", json!({}))).await;
    assert_eq!(listed["result"]["tools"][0]["name"], "search_books");
    assert!(listed["result"].get("resultType").is_none());

    let called = peer
        .call(request(
            3,
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "dune", "limit": 5}}),
        ))
        .await;
    assert_eq!(
        called["result"]["content"][0]["text"],
        "Found 3 books matching 'dune' (showing up to 5)."
    );
    let failed = peer
        .call(request(
            4,
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "dune"}}),
        ))
        .await;
    assert_eq!(
        failed["error"],
        json!({"code": -32603, "message": "Internal server error"})
    );
    peer.finish().await;
}

#[tokio::test]
async fn a_2026_client_drives_the_example_over_stdio() {
    let mut peer = Peer::spawn("lowlevel_one_tool");
    let discover = peer.call(modern(1, "server/discover", json!({}))).await;
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    let called = peer
        .call(modern(
            2,
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "dune", "limit": 2}}),
        ))
        .await;
    assert_eq!(called["result"]["resultType"], "complete");
    assert_eq!(
        called["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "Bookshop", "version": ""})
    );
    let init = peer.call(modern(3, "initialize", json!({}))).await;
    assert_eq!(
        init["error"]["code"], -32601,
        "initialize does not exist on 2026"
    );
    peer.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
        .await;
    let missing = peer.recv().await;
    assert_eq!(missing["error"]["code"], -32602, "missing _meta envelope");
    // Pipelined requests, then end of input before reading: every one is answered before the
    // process exits.
    for id in 10..20 {
        peer.send(&modern(
            id,
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "q", "limit": id}}),
        ))
        .await;
    }
    drop(peer.stdin.take());
    let mut ids: Vec<i64> = Vec::new();
    for _ in 10..20 {
        ids.push(peer.recv().await["id"].as_i64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, (10..20).collect::<Vec<_>>());
    peer.finish().await;
}

#[tokio::test]
async fn the_quickstart_prints_its_tool_and_results() {
    let out = Command::new(example("quickstart"))
        .output()
        .await
        .expect("quickstart runs");
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "tool: add - Add two integers.");
    assert!(
        lines[1].starts_with("  input schema: {\"type\":\"object\",\"properties\":{\"a\":"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "add(2, 3) = 5");
    assert_eq!(lines[3], "add(2) -> isError: \"b\" is a required property");
}

#[tokio::test]
async fn the_high_level_examples_serve_over_stdio_in_both_eras() {
    // bookshop, 2026.
    let mut peer = Peer::spawn("bookshop");
    let listed = peer.call(modern(1, "tools/list", json!({}))).await;
    let names: Vec<_> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("search_books"), json!("add_book")]);
    let found = peer
        .call(modern(
            2,
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "le guin"}}),
        ))
        .await;
    assert_eq!(
        found["result"]["structuredContent"][0]["title"],
        "The Left Hand of Darkness"
    );
    let refused = peer
        .call(modern(
            3,
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "x", "limit": 80}}),
        ))
        .await;
    assert_eq!(refused["result"]["isError"], true);
    assert_eq!(
        refused["result"]["content"][0]["text"],
        "limit: 80 is greater than the maximum of 50"
    );
    peer.finish().await;

    // catalog, 2025: the hand-written resources/subscribe answers {}.
    let mut peer = Peer::spawn("catalog");
    let init = peer
        .call(request(1, "initialize", json!({
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}
        })))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        init["result"]["capabilities"]["resources"]["subscribe"],
        true
    );
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let hits = peer
        .call(request(
            2,
            "tools/call",
            json!({"name": "search", "arguments": {"query": "mug"}}),
        ))
        .await;
    assert_eq!(hits["result"]["content"][0]["text"], "Travel mug");
    let sub = peer
        .call(request(
            3,
            "resources/subscribe",
            json!({"uri": "catalog://x"}),
        ))
        .await;
    assert_eq!(sub["result"], json!({}));
    peer.finish().await;

    // one_tool, 2026.
    let mut peer = Peer::spawn("one_tool");
    let sum = peer
        .call(modern(
            1,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 20, "b": 22}}),
        ))
        .await;
    assert_eq!(sum["result"]["structuredContent"], 42);
    peer.finish().await;
}

fn sign_up(id: i64, extra: Value) -> Value {
    let mut params = json!({"name": "sign_up", "arguments": {}});
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    let mut msg = modern(id, "tools/call", params);
    msg["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"form": {}}});
    msg
}

#[tokio::test]
async fn a_multi_step_form_crosses_replicas_that_share_state_keys() {
    let key = modelctx::request_state::KeyRing::generate_key();
    let env = [("MCP_REQUEST_STATE_KEYS", key.as_str())];
    let mut first = Peer::spawn_with("signup", &env);
    let r1 = first.call(sign_up(1, json!({}))).await;
    assert_eq!(r1["result"]["resultType"], "input_required");
    let s1 = r1["result"]["requestState"].clone();
    first.finish().await;

    // Round two on another process with the same keys.
    let mut second = Peer::spawn_with("signup", &env);
    let person = json!({"person": {"action": "accept", "content": {"name": "Ada", "email": "ada@example.com"}}});
    let r2 = second
        .call(sign_up(
            2,
            json!({"requestState": s1, "inputResponses": person}),
        ))
        .await;
    assert_eq!(
        r2["result"]["inputRequests"]["plan"]["params"]["message"],
        "Which plan would you like, Ada?"
    );
    let s2 = r2["result"]["requestState"].clone();
    let plan = json!({"plan": {"action": "accept", "content": {"plan": "free"}}});
    let r3 = second
        .call(sign_up(
            3,
            json!({"requestState": s2, "inputResponses": plan}),
        ))
        .await;
    assert_eq!(
        r3["result"]["content"][0]["text"],
        "Signed up Ada <ada@example.com> for Free."
    );
    second.finish().await;

    // A process with other keys refuses the state.
    let mut stranger = Peer::spawn("signup");
    let refused = stranger
        .call(sign_up(
            4,
            json!({"requestState": s2, "inputResponses": plan}),
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32602);
    assert_eq!(
        refused["error"]["message"],
        "Invalid or expired requestState"
    );
    stranger.finish().await;
}

#[tokio::test]
async fn a_2025_client_answers_both_forms_over_stdio() {
    let mut peer = Peer::spawn("signup");
    peer.call(request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
               "clientInfo": {"name": "stdio-test", "version": "1"}}),
    ))
    .await;
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    peer.send(&request(
        1,
        "tools/call",
        json!({"name": "sign_up", "arguments": {}}),
    ))
    .await;
    let ask = peer.recv().await;
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Who is signing up?");
    peer.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Bo", "email": "bo@example.com"}}}))
        .await;
    let ask = peer.recv().await;
    assert_eq!(ask["params"]["message"], "Which plan would you like, Bo?");
    peer.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}))
        .await;
    let done = peer.recv().await;
    assert_eq!(done["id"], 1);
    assert_eq!(done["result"]["isError"], true);
    assert_eq!(done["result"]["content"][0]["text"], "no plan chosen");
    peer.finish().await;
}
