//! The client side of the 2026 tasks extension (SEP-2663) against an in-process server:
//! task-augmented calls, `await_task` to a result, an error or a cancellation, input a parked
//! task needs answered by the builder's `on_elicit`, tools that never run as tasks, and a 2025
//! connection that gets plain results.

use std::time::Duration;

mod support;

use modelctx::client::{Client, ToolCallOutcome};
use modelctx::prelude::*;
use modelctx::types::*;
use serde_json::json;

#[allow(unreachable_pub)] // shared by two test crates, each using part of it
#[path = "support/task_tools.rs"]
mod task_tools;

fn server() -> McpServer {
    task_tools::server("tasks-client-test")
}

/// A client whose `on_elicit` answers every form with `name`.
fn answering(name: &'static str) -> modelctx::client::ClientBuilder {
    Client::builder()
        .on_elicit(move |_| async move { Ok(ElicitResult::accept(json!({ "name": name }))) })
}

fn task(outcome: ToolCallOutcome) -> Task {
    match outcome {
        ToolCallOutcome::Task(task) => task,
        ToolCallOutcome::Done(result) => panic!("expected a task, got the result {result:?}"),
    }
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().expect("text content")
}

#[tokio::test]
async fn a_task_is_created_polled_and_awaited_to_its_result() {
    let client = Client::connect(server()).await.unwrap();
    let created = task(
        client
            .call_tool_as_task("work", json!({"ms": 300}))
            .await
            .unwrap(),
    );
    assert_eq!(created.status, TaskStatus::Working);
    assert_eq!(created.task_id.len(), 32);
    assert_eq!(created.poll_interval_ms, Some(500));

    let state = client.get_task(&created.task_id).await.unwrap();
    assert_eq!(state.status(), TaskStatus::Working);
    assert!(state.result.is_none() && state.error.is_none());

    let result = client.await_task(&created.task_id).await.unwrap();
    assert_eq!(text(&result), "worked 300 ms");
    let state = client.get_task(&created.task_id).await.unwrap();
    assert_eq!(state.status(), TaskStatus::Completed);
    assert_eq!(state.result.as_ref().map(text), Some("worked 300 ms"));

    // The plain API never declares the extension: the same tool answers synchronously.
    let plain = client.call_tool("work", json!({"ms": 1})).await.unwrap();
    assert_eq!(text(&plain), "worked 1 ms");
    client.close().await;
}

#[tokio::test]
async fn a_failed_task_gives_its_error_and_a_tool_error_its_result() {
    let client = Client::connect(server()).await.unwrap();
    let crashing = task(
        client
            .call_tool_as_task("crashing", json!({}))
            .await
            .unwrap(),
    );
    let err = client.await_task(&crashing.task_id).await.unwrap_err();
    assert_eq!(err.code(), -32602);
    assert_eq!(err.message(), "bad job");
    let state = client.get_task(&crashing.task_id).await.unwrap();
    assert_eq!(state.status(), TaskStatus::Failed);
    assert_eq!(state.error().map(|e| e.code()), Some(-32602));

    let broken = task(client.call_tool_as_task("broken", json!({})).await.unwrap());
    let result = client.await_task(&broken.task_id).await.unwrap();
    assert!(result.is_error);
    assert_eq!(text(&result), "disk full");

    // An unknown task is the server's -32602.
    let err = client.get_task("no-such-task").await.unwrap_err();
    assert_eq!(err.code(), -32602);
    client.close().await;
}

#[tokio::test]
async fn await_task_answers_a_parked_task_with_on_elicit() {
    let client = answering("Ada").connect(server()).await.unwrap();
    let created = task(
        client
            .call_tool_as_task("greet_asked", json!({}))
            .await
            .unwrap(),
    );
    let result = client.await_task(&created.task_id).await.unwrap();
    assert_eq!(text(&result), "Hello, Ada!");

    // Input asked before the task starts is answered in the call itself.
    let created = task(
        client
            .call_tool_as_task("ask_then_work", json!({}))
            .await
            .unwrap(),
    );
    let result = client.await_task(&created.task_id).await.unwrap();
    assert_eq!(text(&result), "done for Ada");
    client.close().await;
}

#[tokio::test]
async fn update_task_answers_by_hand() {
    // Elicitation declared, no handler: the questions are answered by hand.
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation = json!({"form": {}}).as_object().cloned();
    let client = Client::builder()
        .capabilities(capabilities)
        .connect(server())
        .await
        .unwrap();
    let id = task(
        client
            .call_tool_as_task("greet_asked", json!({}))
            .await
            .unwrap(),
    )
    .task_id;
    let mut state = client.get_task(&id).await.unwrap();
    for _ in 0..250 {
        if state.status() == TaskStatus::InputRequired {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        state = client.get_task(&id).await.unwrap();
    }
    let asked = state.input_requests.expect("input requests");
    assert_eq!(asked["who"]["method"], "elicitation/create");
    let answer = json!({"who": {"action": "accept", "content": {"name": "Grace"}}});
    client
        .update_task(&id, answer.as_object().unwrap().clone())
        .await
        .unwrap();
    let result = client.await_task(&id).await.unwrap();
    assert_eq!(text(&result), "Hello, Grace!");

    // Without an on_elicit handler, await_task says what it cannot answer.
    let id = task(
        client
            .call_tool_as_task("greet_asked", json!({}))
            .await
            .unwrap(),
    )
    .task_id;
    let err = client.await_task(&id).await.unwrap_err();
    assert!(err.message().contains("no handler"), "{err}");
    client.close().await;
}

#[tokio::test]
async fn a_cancelled_task_ends_cancelled() {
    let client = Client::connect(server()).await.unwrap();
    let id = task(
        client
            .call_tool_as_task("work", json!({"ms": 60_000}))
            .await
            .unwrap(),
    )
    .task_id;
    client.cancel_task(&id).await.unwrap();
    let state = client.get_task(&id).await.unwrap();
    assert_eq!(state.status(), TaskStatus::Cancelled);
    assert!(state.result.is_none());
    let err = client.await_task(&id).await.unwrap_err();
    assert_eq!(err.code(), -32800);
    // Cancelling an ended task is acknowledged and changes nothing.
    client.cancel_task(&id).await.unwrap();
    assert_eq!(
        client.get_task(&id).await.unwrap().status(),
        TaskStatus::Cancelled
    );
    client.close().await;
}

#[tokio::test]
async fn a_tool_that_is_never_a_task_is_done_at_once() {
    let client = Client::connect(server()).await.unwrap();
    match client.call_tool_as_task("quick", json!({})).await.unwrap() {
        ToolCallOutcome::Done(result) => assert_eq!(text(&result), "quick"),
        ToolCallOutcome::Task(task) => panic!("a forbidden tool became task {task:?}"),
    }
    client.close().await;
}

#[tokio::test]
async fn a_2025_client_gets_plain_results() {
    let client = Client::builder().legacy().connect(server()).await.unwrap();
    match client
        .call_tool_as_task("work", json!({"ms": 20}))
        .await
        .unwrap()
    {
        ToolCallOutcome::Done(result) => assert_eq!(text(&result), "worked 20 ms"),
        ToolCallOutcome::Task(task) => panic!("a 2025 call became task {task:?}"),
    }
    client.close().await;
}

/// Over 2026 HTTP, whose server checks `Mcp-Name` against the body's `taskId` on tasks
/// methods: a task is created, answered, awaited and cancelled.
#[tokio::test]
async fn tasks_work_over_http() {
    use modelctx::transport::{HttpClientTransport, HttpConfig};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(
        server().serve_http_on(listener, HttpConfig::default(), async {
            let _ = stopped.await;
        }),
    );
    let client = answering("Ada")
        .connect(HttpClientTransport::new(&url).unwrap())
        .await
        .unwrap();
    let id = task(
        client
            .call_tool_as_task("greet_asked", json!({}))
            .await
            .unwrap(),
    )
    .task_id;
    assert_eq!(text(&client.await_task(&id).await.unwrap()), "Hello, Ada!");
    let id = task(
        client
            .call_tool_as_task("work", json!({"ms": 60_000}))
            .await
            .unwrap(),
    )
    .task_id;
    client.cancel_task(&id).await.unwrap();
    assert_eq!(
        client.get_task(&id).await.unwrap().status(),
        TaskStatus::Cancelled
    );
    client.close().await;
    let _ = stop.send(());
    let _ = served.await;
}

/// A server served over stdio installs the tasks extension exactly as one served over HTTP:
/// the conformance server as a child process, its `slow_compute` tool run as a task.
#[tokio::test]
async fn tasks_work_over_stdio() {
    let child = modelctx::transport::ChildProcess::new(support::example("conformance_server"))
        .arg("--stdio")
        .stderr(modelctx::transport::Stderr::Discard);
    let client = Client::connect(child).await.unwrap();
    let outcome = client
        .call_tool_as_task("slow_compute", json!({"seconds": 0.05, "label": "stdio"}))
        .await
        .unwrap();
    let ToolCallOutcome::Task(task) = outcome else {
        panic!("slow_compute runs as a task: {outcome:?}");
    };
    let done = client.await_task(&task.task_id).await.unwrap();
    assert_eq!(
        done.content[0].as_text(),
        Some("Computed stdio after 0.05s")
    );
    client.close().await;
}
