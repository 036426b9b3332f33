//! Internal failures: generic on the wire, detailed in the `tracing` log. And cancellation from
//! the in-memory client.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelctx::prelude::*;
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Records every event's fields as text.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

impl Capture {
    fn logged(&self, needle: &str) -> bool {
        self.0
            .lock()
            .unwrap()
            .iter()
            .any(|line| line.contains(needle))
    }
}

/// Fail with a secret detail.
#[tool]
async fn leak() -> Result<String, std::io::Error> {
    Err(std::io::Error::other("password=hunter2"))
}

#[tokio::test]
async fn the_detail_of_an_internal_failure_goes_to_the_log_only() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());

    let mut low = Server::new("low");
    low.on_call_tool(|_, _| async {
        Err::<CallToolResult, _>(McpError::internal("db password=hunter2 rejected"))
    });
    let client = Client::connect(low).await.unwrap();
    let err = client.call_tool("x", json!({})).await.unwrap_err();
    assert_eq!(err.message(), "Internal server error");
    assert!(
        !format!("{err:?}").contains("hunter2"),
        "nothing of the detail on the wire"
    );
    client.close().await;
    assert!(
        capture.logged("db password=hunter2 rejected"),
        "the detail is in the log"
    );

    let client = Client::connect(McpServer::new("high").tool(LeakTool))
        .await
        .unwrap();
    let result = client.call_tool("leak", json!({})).await.unwrap();
    assert_eq!(
        result.content[0].as_text(),
        Some("Error executing tool leak")
    );
    client.close().await;
    assert!(capture.logged("password=hunter2") && capture.logged("leak"));
}

#[tokio::test]
async fn the_client_cancels_a_request() {
    let finished = Arc::new(AtomicBool::new(false));
    let mut server = Server::new("slow");
    let f = finished.clone();
    server.on_call_tool(move |_, _| {
        let f = f.clone();
        async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            f.store(true, Ordering::SeqCst);
            Ok(CallToolResult::text("too late"))
        }
    });
    let client = Client::connect(server).await.unwrap();
    let pending = client
        .start_request("tools/call", json!({"name": "slow"}))
        .await
        .unwrap();
    let id = pending.id().clone();
    client.cancel(&id, Some("changed my mind")).await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), pending.response())
        .await
        .expect("a cancelled request resolves at once");
    assert!(outcome.unwrap_err().message().contains("cancelled"));
    // The server keeps serving, and the handler never finished.
    assert!(
        client.list_tools().await.is_err(),
        "no tools/list handler: -32601 answered"
    );
    tokio::time::timeout(Duration::from_secs(5), client.close())
        .await
        .expect("close does not wait for the aborted handler");
    assert!(!finished.load(Ordering::SeqCst));
}
