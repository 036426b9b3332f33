//! The client against real servers: the conformance server as a stdio child process and over
//! HTTP on 127.0.0.1, in both eras; the torture server for failures (a server that exits
//! mid-request, one that prints garbage, one that never answers); an HTTP session the server
//! expires; a 2025 response stream cut and resumed.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelctx::client::{Client, EraChoice, RequestOptions};
use modelctx::era::Era;
use modelctx::transport::{ChildProcess, HttpClientTransport, HttpConfig, Stderr};
use modelctx::types::*;
use serde_json::{json, Value};
use support::example;

fn conformance_stdio() -> ChildProcess {
    ChildProcess::new(example("conformance_server"))
        .arg("--stdio")
        .stderr(Stderr::Discard)
}

fn torture_stdio() -> ChildProcess {
    ChildProcess::new(example("torture")).stderr(Stderr::Discard)
}

/// A client answering every kind of input request.
fn answering() -> modelctx::client::ClientBuilder {
    Client::builder()
        .on_elicit(|params| async move {
            let name = if params.message.contains("name") {
                "Ada"
            } else {
                "ada"
            };
            Ok(ElicitResult::accept(
                json!({"name": name, "username": "ada", "email": "ada@example.com"}),
            ))
        })
        .on_sample(|_| async move {
            Ok(serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "four"},
                "model": "test-model"
            }))?)
        })
        .on_list_roots(|| async move {
            Ok(serde_json::from_value(
                json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
            )?)
        })
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("")
}

/// A child process serving HTTP; killed by PID on drop.
struct HttpChild {
    child: std::process::Child,
    url: String,
}

impl HttpChild {
    fn start(example_name: &str, args: &[&str]) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(example(example_name))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server prints its URL");
        Self {
            child,
            url: line.trim().to_owned(),
        }
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every verb over stdio, in the era found by negotiation (2026 with this server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_negotiates_2026_and_serves_every_verb() {
    let client = answering().connect(conformance_stdio()).await.unwrap();
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().unwrap().name, "mcp-rust-conformance");
    assert!(client.server_capabilities().unwrap().tools.is_some());
    verbs(&client).await;

    // Multi-round-trip input, answered by the callbacks.
    let greeted = client
        .call_tool("test_input_required_result_elicitation", json!({}))
        .await
        .unwrap();
    assert_eq!(text(&greeted), "Hello, Ada!");
    client.close().await;
}

async fn verbs(client: &Client) {
    let tools = client.list_all_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "test_simple_text"),
        "{tools:?}"
    );
    let simple = client
        .call_tool("test_simple_text", json!({}))
        .await
        .unwrap();
    assert_eq!(text(&simple), "This is a simple text response for testing.");
    let failed = client
        .call_tool("test_error_handling", json!({}))
        .await
        .unwrap();
    assert!(failed.is_error);

    // Progress arrives at the request's own callback.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = RequestOptions::new().on_progress(move |p| sink.lock().unwrap().push(p.progress));
    let done = client
        .call_tool_with("test_tool_with_progress", json!({}), &options)
        .await
        .unwrap();
    assert_eq!(text(&done), "Progress test completed");
    assert_eq!(*seen.lock().unwrap(), vec![0.0, 50.0, 100.0]);

    let resources = client.list_all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == "test://static-text"));
    let read = client.read_resource("test://static-text").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents[0]).unwrap()["text"],
        "This is the content of the static text resource."
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    assert!(!templates.is_empty());
    let prompts = client.list_all_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "test_simple_prompt"));
    let prompt = client
        .get_prompt("test_simple_prompt", Default::default())
        .await
        .unwrap();
    assert!(!prompt.messages.is_empty());
    let completed = client
        .complete(
            CompletionReference::Prompt {
                name: "test_prompt_with_arguments".into(),
                title: None,
            },
            "arg1",
            "",
        )
        .await
        .unwrap();
    assert!(!completed.completion.values.is_empty());
}

/// A pinned 2025 client over stdio: `initialize`, server-to-client requests answered by the
/// callbacks, log messages to the handler, `ping`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_2025_answers_server_requests_and_hears_logs() {
    let logs = Arc::new(Mutex::new(Vec::new()));
    let sink = logs.clone();
    let client = answering()
        .legacy()
        .on_log_message(move |m| sink.lock().unwrap().push(m.data.clone()))
        .connect(conformance_stdio())
        .await
        .unwrap();
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(
        client.initialize_result().unwrap().server_info.name,
        "mcp-rust-conformance"
    );
    client.ping().await.unwrap();
    verbs(&client).await;
    let elicited = client
        .call_tool("test_elicitation", json!({"message": "Who are you?"}))
        .await
        .unwrap();
    assert!(
        text(&elicited).contains("action=accept"),
        "{}",
        text(&elicited)
    );
    assert!(text(&elicited).contains("ada@example.com"));
    let sampled = client
        .call_tool("test_sampling", json!({"prompt": "2+2?"}))
        .await
        .unwrap();
    assert_eq!(text(&sampled), "LLM response: four");
    client.set_logging_level(LoggingLevel::Info).await.unwrap();
    client
        .call_tool("test_tool_with_logging", json!({}))
        .await
        .unwrap();
    assert_eq!(
        *logs.lock().unwrap(),
        vec![
            json!("Tool execution started"),
            json!("Tool processing data"),
            json!("Tool execution completed")
        ]
    );
    client.close().await;
}

/// A 2026 `subscriptions/listen` stream over stdio: the change a tool makes arrives tagged
/// with the listen request's id; dropping the listen future ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_listen_streams_list_changes() {
    let client = Client::connect(conformance_stdio()).await.unwrap();
    hear_a_list_change(&client).await;
    client.close().await;
}

/// Opens a listen stream, triggers a tool-list change, and checks the notification is tagged
/// with the stream's id; dropping the stream's request ends it.
async fn hear_a_list_change(client: &Client) {
    let listen = client
        .start_request(
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .await
        .unwrap();
    let ack = client.next_notification().await.unwrap();
    assert_eq!(ack.method, "notifications/subscriptions/acknowledged");
    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    let changed = loop {
        let note = client.next_notification().await.unwrap();
        if note.method == "notifications/tools/list_changed" {
            break note;
        }
    };
    assert_eq!(
        changed.params["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen.id().to_value()
    );
    drop(listen);
}

/// The torture server over stdio: a call that never answers times out and is cancelled on the
/// server; a dropped call is cancelled too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_timeouts_and_dropped_calls_cancel_on_the_server() {
    let client = Client::builder()
        .request_timeout(Some(Duration::from_millis(300)))
        .connect(torture_stdio())
        .await
        .unwrap();
    let err = client.call_tool("hang", json!({})).await.unwrap_err();
    assert!(err.message().contains("timed out"), "{err}");
    wait_for_drops(&client, 1).await;

    // Dropping the future is cancellation.
    let forever = RequestOptions::new().timeout(None);
    let call = client.call_tool_with("hang", json!({}), &forever);
    let raced = tokio::time::timeout(Duration::from_millis(200), call).await;
    assert!(raced.is_err(), "hang never answers");
    wait_for_drops(&client, 2).await;

    // The connection still serves.
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(text(&sum), "5");
    client.close().await;
}

async fn wait_for_drops(client: &Client, n: u64) {
    for _ in 0..100 {
        let seen = client.call_tool("hangs_dropped", json!({})).await.unwrap();
        if text(&seen) == n.to_string() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the server never saw cancellation {n}");
}

/// A server that exits mid-request fails the request with its exit status, and later
/// requests fail at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_fails_pending_requests() {
    let client = Client::connect(torture_stdio()).await.unwrap();
    let err = client.call_tool("exit", json!({})).await.unwrap_err();
    assert!(err.message().contains("exited (exit status 3)"), "{err}");
    let later = client.list_tools().await.unwrap_err();
    assert!(later.message().contains("exit status 3"), "{later}");
    client.close().await;
}

/// A line that is not JSON on the server's stdout fails what is pending, with the line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_stdout_fails_pending_requests() {
    let client = Client::connect(torture_stdio()).await.unwrap();
    let err = client.call_tool("garbage", json!({})).await.unwrap_err();
    assert!(
        err.message().contains("not JSON-RPC") && err.message().contains("this is not json"),
        "{err}"
    );
    client.close().await;
}

/// A program that does not exist is a clear connect error.
#[tokio::test]
async fn a_missing_program_is_a_clear_error() {
    let err = Client::connect(ChildProcess::new("/nonexistent/mcp-server"))
        .await
        .unwrap_err();
    assert!(
        err.message()
            .contains("could not start the server `mcp-server`"),
        "{err}"
    );
}

/// Both eras over HTTP against the conformance server in a child process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_both_eras_serve_every_verb() {
    let server = HttpChild::start("conformance_server", &["--port", "0"]);
    let modern = answering()
        .connect(HttpClientTransport::new(&server.url).unwrap())
        .await
        .unwrap();
    assert_eq!(modern.era(), Era::Modern);
    verbs(&modern).await;
    // The tool's region argument is mirrored into Mcp-Param-Region (the server checks it).
    let region = modern
        .call_tool("test_x_mcp_header", json!({"region": "Zürich"}))
        .await
        .unwrap();
    assert_eq!(text(&region), "region=Zürich");
    let greeted = modern
        .call_tool("test_input_required_result_elicitation", json!({}))
        .await
        .unwrap();
    assert_eq!(text(&greeted), "Hello, Ada!");
    modern.close().await;

    let legacy = answering()
        .legacy()
        .connect(HttpClientTransport::new(&server.url).unwrap())
        .await
        .unwrap();
    assert_eq!(legacy.era(), Era::Legacy);
    verbs(&legacy).await;
    let sampled = legacy
        .call_tool("test_sampling", json!({"prompt": "2+2?"}))
        .await
        .unwrap();
    assert_eq!(text(&sampled), "LLM response: four");
    // The server closes the response stream before answering; the client resumes it with
    // Last-Event-ID after the server's retry.
    let resumed = legacy
        .call_tool("test_reconnection", json!({}))
        .await
        .unwrap();
    assert_eq!(text(&resumed), "Reconnection test completed");
    legacy.close().await;
}

/// The 2025 standalone GET stream carries list changes to the handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_2025_list_changes_arrive_on_the_standalone_stream() {
    let server = HttpChild::start("conformance_server", &["--port", "0"]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = Client::builder()
        .legacy()
        .on_notification("notifications/tools/list_changed", move |_| {
            let _ = tx.send(());
        })
        .connect(HttpClientTransport::new(&server.url).unwrap())
        .await
        .unwrap();
    // Give the standalone stream a moment to open, then change the tool list.
    client.ping().await.unwrap();
    let mut heard = false;
    for _ in 0..20 {
        client
            .call_tool("test_trigger_tool_change", json!({}))
            .await
            .unwrap();
        if tokio::time::timeout(Duration::from_millis(250), rx.recv())
            .await
            .is_ok()
        {
            heard = true;
            break;
        }
    }
    assert!(heard, "a list change reached the handler");
    client.close().await;
}

/// A 2025 session the server no longer knows (404: here the server restarted) is replaced
/// transparently and the request retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_expired_session_is_reopened_and_the_request_retried() {
    async fn serve(
        listener: tokio::net::TcpListener,
    ) -> (
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<modelctx::Result<()>>,
    ) {
        let server = modelctx::server::McpServer::new("restarting").tool(EchoTool);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(
            server.serve_http_on(listener, HttpConfig::default(), async {
                let _ = stopped.await;
            }),
        );
        (stop, task)
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/mcp");
    let (stop, task) = serve(listener).await;
    let client = Client::builder()
        .legacy()
        .connect(HttpClientTransport::new(&url).unwrap())
        .await
        .unwrap();
    let first = client
        .call_tool("echo", json!({"text": "one"}))
        .await
        .unwrap();
    assert_eq!(text(&first), "one");

    // A new server process on the same port knows no sessions.
    let _ = stop.send(());
    let _ = task.await;
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let (stop, task) = serve(listener).await;
    let second = client
        .call_tool("echo", json!({"text": "two"}))
        .await
        .unwrap();
    assert_eq!(text(&second), "two");
    client.close().await;
    let _ = stop.send(());
    let _ = task.await;
}

/// Echoes the text.
#[modelctx::tool]
async fn echo(text: String) -> String {
    text
}

/// An endpoint nobody listens on is a clear error, not a hang.
#[tokio::test]
async fn an_unreachable_endpoint_is_a_clear_error() {
    let url = format!("http://127.0.0.1:{}/mcp", support::CLOSED_PORT);
    let err = Client::builder()
        .era_choice(EraChoice::Auto)
        .connect(HttpClientTransport::new(&url).unwrap())
        .await
        .unwrap_err();
    assert!(err.message().contains("could not reach"), "{err}");
}

/// A pinned 2026 client needs no request to connect; the envelope rides in `_meta`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_2026_client_sends_nothing_on_connect() {
    let client = Client::builder()
        .modern()
        .connect(conformance_stdio())
        .await
        .unwrap();
    assert!(client.discover_result().is_none());
    let discover = client.discover().await.unwrap();
    assert!(discover
        .supported_versions
        .contains(&"2026-07-28".to_owned()));
    assert_eq!(client.server_info().unwrap().name, "mcp-rust-conformance");
    let raw: Value = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(raw["resultType"], "complete");
    client.close().await;
}

/// Over HTTP, a call that times out or whose future is dropped is cancelled on the server:
/// 2026 closes the response (the spec's cancellation), 2025 sends `notifications/cancelled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_cancellation_reaches_the_server_in_both_eras() {
    for legacy in [false, true] {
        let server = HttpChild::start("torture", &["--http", "127.0.0.1:0"]);
        let builder = Client::builder().request_timeout(Some(Duration::from_millis(300)));
        let builder = if legacy { builder.legacy() } else { builder };
        let client = builder
            .connect(HttpClientTransport::new(&server.url).unwrap())
            .await
            .unwrap();
        assert_eq!(client.era() == Era::Legacy, legacy);
        let err = client.call_tool("hang", json!({})).await.unwrap_err();
        assert!(err.message().contains("timed out"), "{err}");
        wait_for_drops(&client, 1).await;
        let forever = RequestOptions::new().timeout(None);
        let call = client.call_tool_with("hang", json!({}), &forever);
        assert!(tokio::time::timeout(Duration::from_millis(200), call)
            .await
            .is_err());
        wait_for_drops(&client, 2).await;
        client.close().await;
    }
}

/// A one-request-per-connection HTTP server on 127.0.0.1 that records each request's head
/// (lowercased) and answers with `answer(body)` as `(content type, body)`.
async fn recording_server<F>(
    answer: F,
) -> (String, Arc<Mutex<Vec<String>>>, tokio::task::JoinHandle<()>)
where
    F: Fn(&Value) -> (&'static str, String) + Send + Sync + 'static,
{
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = seen.clone();
    let answer = Arc::new(answer);
    let task = tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let (record, answer) = (record.clone(), answer.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head, body) = loop {
                    let Ok(n) = tcp.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    let Some((head, body)) = text.split_once("\r\n\r\n") else {
                        continue;
                    };
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            let l = l.to_ascii_lowercase();
                            l.strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if body.len() >= length {
                        break (head.to_ascii_lowercase(), body[..length].to_owned());
                    }
                };
                record.lock().unwrap().push(head);
                let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let (content_type, reply) = answer(&request);
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                    reply.len()
                );
                let _ = tcp.write_all(response.as_bytes()).await;
            });
        }
    });
    (url, seen, task)
}

/// Static headers go on every request, per-request ones on theirs, beside the 2026 standard
/// headers (the recording server answers like a 2026 server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_custom_headers_static_and_per_request() {
    let (url, seen, server) = recording_server(|request| {
        let result = match request["method"].as_str() {
            Some("server/discover") => json!({"resultType": "complete",
                "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                "ttlMs": 0, "cacheScope": "private"}),
            Some("tools/list") => json!({"resultType": "complete", "tools": [],
                "ttlMs": 0, "cacheScope": "private"}),
            _ => json!({"resultType": "complete", "content": []}),
        };
        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
        ("application/json", answer.to_string())
    })
    .await;
    let transport = HttpClientTransport::new(&url)
        .unwrap()
        .header("x-api-key", "k-123")
        .unwrap();
    let client = Client::connect(transport).await.unwrap();
    let options = RequestOptions::new().header("x-trace", "t-1");
    client
        .call_tool_with("anything", json!({}), &options)
        .await
        .unwrap();
    client.close().await;
    server.abort();
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(
        seen.iter().all(|h| h.contains("x-api-key: k-123")),
        "{seen:?}"
    );
    let call = seen
        .iter()
        .find(|h| h.contains("mcp-method: tools/call"))
        .expect("the call was seen");
    assert!(call.contains("x-trace: t-1"), "{call}");
    assert!(call.contains("mcp-name: anything"), "{call}");
    assert!(call.contains("mcp-protocol-version: 2026-07-28"), "{call}");
    assert_eq!(
        seen.iter().filter(|h| h.contains("x-trace")).count(),
        1,
        "{seen:?}"
    );
}

/// An HTTP answer that is not JSON-RPC fails its request with the text, not the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_garbage_fails_the_request_with_the_text() {
    let (url, _seen, server) =
        recording_server(|_| ("application/json", "hello, world".into())).await;
    let err = Client::connect(HttpClientTransport::new(&url).unwrap())
        .await
        .unwrap_err();
    assert!(
        err.message().contains("not JSON-RPC") && err.message().contains("hello, world"),
        "{err}"
    );
    server.abort();
}

/// A 2026 `subscriptions/listen` stream over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_2026_listen_streams_list_changes() {
    let server = HttpChild::start("conformance_server", &["--port", "0"]);
    let client = Client::connect(HttpClientTransport::new(&server.url).unwrap())
        .await
        .unwrap();
    hear_a_list_change(&client).await;
    client.close().await;
}

/// With `cache_results`, a cacheable 2026 result is served from the cache for its `ttlMs`, and
/// a list-changed notification drops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cacheable_results_are_reused_for_their_ttl() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let lists = Arc::new(AtomicUsize::new(0));
    let counted = lists.clone();
    let mut server = modelctx::lowlevel::Server::new("cached");
    server
        .on_list_tools(move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok(ListToolsResult::default()) }
        })
        .cache_hint("tools/list", modelctx::lowlevel::CacheHint::public(60_000));
    let client = Client::builder()
        .cache_results(true)
        .connect(server)
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(
        lists.load(Ordering::SeqCst),
        1,
        "the second list came from the cache"
    );
    let uncached = Client::connect({
        let counted = lists.clone();
        let mut s = modelctx::lowlevel::Server::new("uncached");
        s.on_list_tools(move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok(ListToolsResult::default()) }
        })
        .cache_hint("tools/list", modelctx::lowlevel::CacheHint::public(60_000));
        s
    })
    .await
    .unwrap();
    uncached.list_tools().await.unwrap();
    uncached.list_tools().await.unwrap();
    assert_eq!(lists.load(Ordering::SeqCst), 3, "no cache unless asked");
    client.close().await;
    uncached.close().await;
}

/// Many calls at once over one client, in both eras over HTTP and over stdio: every answer
/// reaches its own caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_each_get_their_own_answer() {
    let server = HttpChild::start("torture", &["--http", "127.0.0.1:0"]);
    let clients = vec![
        Client::connect(HttpClientTransport::new(&server.url).unwrap())
            .await
            .unwrap(),
        Client::builder()
            .legacy()
            .connect(HttpClientTransport::new(&server.url).unwrap())
            .await
            .unwrap(),
        Client::connect(torture_stdio()).await.unwrap(),
    ];
    for client in clients {
        let client = Arc::new(client);
        let mut calls = tokio::task::JoinSet::new();
        for i in 0..200i64 {
            let client = client.clone();
            calls.spawn(async move {
                let sum = client
                    .call_tool("add", json!({"a": i, "b": 1000}))
                    .await
                    .unwrap();
                assert_eq!(text(&sum), (i + 1000).to_string());
            });
        }
        while let Some(done) = calls.join_next().await {
            done.unwrap();
        }
        if let Ok(client) = Arc::try_unwrap(client) {
            client.close().await;
        }
    }
}

/// Closing a server that ignores the end of its stdin: after the close timeout it is
/// terminated, not left running (here a shell that would sleep on after the server exits).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_terminates_a_server_that_does_not_exit() {
    let pid_file = std::env::temp_dir().join(format!("mcp-close-test-{}", std::process::id()));
    let script = format!("echo $$ > {}; \"$0\"; sleep 30", pid_file.display());
    let server = ChildProcess::new("sh")
        .args(["-c", &script])
        .arg(example("torture"))
        .stderr(Stderr::Discard)
        .close_timeout(Duration::from_millis(200));
    let client = Client::connect(server).await.unwrap();
    let sum = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(text(&sum), "3");
    client.close().await;
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let _ = std::fs::remove_file(&pid_file);
    let proc_dir = std::path::Path::new("/proc").join(pid.trim());
    assert!(
        !proc_dir.exists(),
        "the server process {} still runs",
        pid.trim()
    );
}

/// `on_resource_updated` hears the updates of a subscribed resource (2025).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_updates_reach_their_handler() {
    let server = modelctx::server::McpServer::new("updates");
    let handle = server.handle();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = Client::builder()
        .legacy()
        .on_resource_updated(move |uri| {
            let _ = tx.send(uri.to_owned());
        })
        .connect(server)
        .await
        .unwrap();
    client.subscribe_resource("shop://stock").await.unwrap();
    handle.resource_updated("shop://stock").unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap();
    assert_eq!(heard.as_deref(), Some("shop://stock"));
    client.close().await;
}

/// Requests in flight on the server's handlers while `slow` runs.
#[derive(Default)]
struct Gauge {
    now: std::sync::atomic::AtomicUsize,
    peak: std::sync::atomic::AtomicUsize,
}

/// Holds a place for 30 ms and records how many calls overlap.
#[modelctx::tool]
async fn slow(gauge: modelctx::server::State<Arc<Gauge>>) -> String {
    use std::sync::atomic::Ordering::SeqCst;
    let now = gauge.now.fetch_add(1, SeqCst) + 1;
    gauge.peak.fetch_max(now, SeqCst);
    tokio::time::sleep(Duration::from_millis(30)).await;
    gauge.now.fetch_sub(1, SeqCst);
    "done".into()
}

/// Asks the client for its roots (a server-to-client request on the call's own stream).
#[modelctx::tool]
async fn count_roots(
    ctx: modelctx::lowlevel::RequestContext<Arc<Gauge>>,
) -> modelctx::Result<String> {
    Ok(ctx.list_roots("roots").await?.len().to_string())
}

/// The HTTP client keeps at most `max_concurrent_requests` requests open (the rest wait), in
/// both eras, and its answers to the server's own requests never wait for a place: one place,
/// taken by a call that waits for such an answer, does not deadlock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_client_bounds_its_open_requests_and_answers_the_server_regardless() {
    use std::sync::atomic::Ordering::SeqCst;
    let gauge = Arc::new(Gauge::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = modelctx::server::McpServer::with_state("gauge", gauge.clone())
        .tool(SlowTool)
        .tool(CountRootsTool);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(
        server.serve_http_on(listener, HttpConfig::default(), async {
            let _ = stopped.await;
        }),
    );
    for builder in [Client::builder(), Client::builder().legacy()] {
        gauge.peak.store(0, SeqCst);
        let transport = HttpClientTransport::new(&url)
            .unwrap()
            .max_concurrent_requests(3);
        let client = Arc::new(builder.connect(transport).await.unwrap());
        let era = client.era();
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..12 {
            let client = client.clone();
            calls.spawn(async move { client.call_tool("slow", json!({})).await });
        }
        while let Some(done) = calls.join_next().await {
            assert_eq!(text(&done.unwrap().unwrap()), "done");
        }
        let peak = gauge.peak.load(SeqCst);
        assert!((2..=3).contains(&peak), "{era:?}: {peak} calls overlapped");
        if let Ok(client) = Arc::try_unwrap(client) {
            client.close().await;
        }
    }

    let one = Client::builder()
        .legacy()
        .on_list_roots(|| async { Ok(ListRootsResult::default()) })
        .connect(
            HttpClientTransport::new(&url)
                .unwrap()
                .max_concurrent_requests(1),
        )
        .await
        .unwrap();
    let roots = tokio::time::timeout(
        Duration::from_secs(10),
        one.call_tool("count_roots", json!({})),
    )
    .await
    .expect("the answer to the server's request is not held back")
    .unwrap();
    assert_eq!(text(&roots), "0");
    one.close().await;
    let _ = stop.send(());
    let _ = task.await;
}
