//! Tasks belong to the principal that created them (tasks extension over real HTTP on
//! 127.0.0.1 with a resource server): another principal is told they do not exist by
//! `tasks/get`, `tasks/update` and `tasks/cancel`, does not hear them on
//! `subscriptions/listen`, and the per-client limit counts each principal apart.

mod support;

use std::time::Duration;

use modelctx::auth::{Principal, ResourceServer, TokenVerifier, VerifyError, VerifyFuture};
use modelctx::prelude::*;
use modelctx::transport::HttpConfig;
use serde_json::{json, Value};
use support::raw_http::send;
use support::sse::SseStream;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// Works for `ms` milliseconds.
#[tool(task = "optional")]
async fn work(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("worked {ms} ms")
}

/// Tokens `alice` and `bob` stand for the principals of those names.
struct Names(String);

impl TokenVerifier for Names {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            match token {
                "alice" | "bob" => Ok(Principal::new(token)
                    .issuer("https://issuer.test")
                    .audience([self.0.clone()])),
                _ => Err(VerifyError::invalid("unknown token")),
            }
        })
    }
}

struct Endpoint {
    port: u16,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn endpoint(server: McpServer) -> Endpoint {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let auth = ResourceServer::new(&resource, Names(resource.clone())).unwrap();
    let config = HttpConfig::default().auth(auth);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = server
            .serve_http_on(listener, config, async move {
                let _ = stopped.await;
            })
            .await;
    });
    Endpoint { port, _stop: stop }
}

/// The headers and body of a 2026 request `method` (naming `name`) as `token`, declaring the
/// tasks extension.
fn request(
    token: &str,
    method: &str,
    name: &str,
    mut params: Value,
) -> (Vec<(String, String)>, String) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let headers = vec![
        ("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()),
        ("Mcp-Method".to_owned(), method.to_owned()),
        ("Mcp-Name".to_owned(), name.to_owned()),
        ("Authorization".to_owned(), format!("Bearer {token}")),
    ];
    (headers, body)
}

/// The JSON-RPC answer to `method` sent as `token`.
async fn ask(at: &Endpoint, token: &str, method: &str, name: &str, params: Value) -> Value {
    let (headers, body) = request(token, method, name, params);
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let reply = send(at.port, "POST", &headers, &body).await;
    reply.message()
}

async fn start(at: &Endpoint, token: &str, ms: u64) -> Value {
    let answer = ask(
        at,
        token,
        "tools/call",
        "work",
        json!({"name": "work", "arguments": {"ms": ms}}),
    )
    .await;
    answer
}

fn task_id(created: &Value) -> String {
    created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned()
}

fn assert_unknown(answer: &Value, id: &str) {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        format!("Unknown task: {id}"),
        "{answer}"
    );
}

#[tokio::test]
async fn another_principal_cannot_read_steer_or_hear_a_task() {
    let at = endpoint(McpServer::new("owned").tool(WorkTool)).await;
    let id = task_id(&start(&at, "alice", 60_000).await);
    let by_id = json!({"taskId": id});

    // Bob: the task does not exist, whatever he asks.
    assert_unknown(&ask(&at, "bob", "tasks/get", &id, by_id.clone()).await, &id);
    assert_unknown(
        &ask(&at, "bob", "tasks/cancel", &id, by_id.clone()).await,
        &id,
    );
    let update = json!({"taskId": id, "inputResponses": {}});
    assert_unknown(&ask(&at, "bob", "tasks/update", &id, update).await, &id);

    // Bob's listener is not told of it; Alice's is.
    for (token, heard) in [("bob", None), ("alice", Some(json!([id])))] {
        let (headers, body) = request(
            token,
            "subscriptions/listen",
            "",
            json!({"notifications": {"taskIds": [id]}}),
        );
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .filter(|(k, _)| k != "Mcp-Name")
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut stream = SseStream::open(at.port, "POST", &headers, &body).await;
        assert_eq!(stream.status, 200, "{}", stream.head);
        let ack = stream.next_json().await;
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        assert_eq!(
            ack["params"]["notifications"].get("taskIds").cloned(),
            heard,
            "{token}: {ack}"
        );
    }

    // Bob's cancel changed nothing; Alice still reads and cancels her task.
    let task = ask(&at, "alice", "tasks/get", &id, by_id.clone()).await;
    assert_eq!(task["result"]["status"], "working", "{task}");
    let ack = ask(&at, "alice", "tasks/cancel", &id, by_id.clone()).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let task = ask(&at, "alice", "tasks/get", &id, by_id).await;
    assert_eq!(task["result"]["status"], "cancelled", "{task}");
}

#[tokio::test]
async fn each_principal_has_its_own_share_of_unfinished_tasks() {
    let server = McpServer::new("limited")
        .tool(WorkTool)
        .max_tasks_per_client(2)
        .max_tasks(3);
    let at = endpoint(server).await;
    let first = task_id(&start(&at, "alice", 60_000).await);
    task_id(&start(&at, "alice", 60_000).await);
    let refused = start(&at, "alice", 60_000).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Too many unfinished tasks for this client (the limit is 2)"),
        "{refused}"
    );

    // Bob is another client: his share is untouched, until the server's limit.
    task_id(&start(&at, "bob", 60_000).await);
    let full = start(&at, "bob", 60_000).await;
    assert!(
        full["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Too many unfinished tasks on this server (the limit is 3)"),
        "{full}"
    );

    // An ended task no longer counts.
    let by_id = json!({"taskId": first});
    ask(&at, "alice", "tasks/cancel", &first, by_id).await;
    task_id(&start(&at, "alice", 60_000).await);

    // Nor does a completed one.
    let at = endpoint(
        McpServer::new("quick")
            .tool(WorkTool)
            .max_tasks_per_client(1),
    )
    .await;
    let id = task_id(&start(&at, "alice", 1).await);
    for _ in 0..250 {
        let task = ask(&at, "alice", "tasks/get", &id, json!({"taskId": id})).await;
        if task["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task_id(&start(&at, "alice", 1).await);
}
