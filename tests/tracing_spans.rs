//! One `tracing` span per inbound request and notification, in both eras, with fields named
//! after the OpenTelemetry semantic conventions for MCP; the W3C trace context a client sets
//! with `RequestOptions::trace_context` reaches the span and `ctx.trace_context()`. The spans
//! are recorded by a small in-memory `tracing` subscriber written here. The same spans as
//! OpenTelemetry exports them (`tracing-opentelemetry`, the in-memory exporter, the
//! traceparent as remote parent) are checked in `examples/otel/tests/span_tree.rs`, a
//! workspace of its own that CI tests in a separate step.

mod support;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use modelctx::client::RequestOptions;
use modelctx::prelude::*;
use modelctx::trace::TraceContext;
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One recorded span.
#[derive(Debug, Clone)]
struct Recorded {
    id: u64,
    name: &'static str,
    parent: Option<u64>,
    fields: HashMap<String, String>,
}

impl Recorded {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

#[derive(Default)]
struct Recorder {
    spans: Mutex<Vec<Recorded>>,
}

thread_local! {
    static ENTERED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let parent = match attrs.parent() {
            Some(parent) => Some(parent.into_u64()),
            None if attrs.is_contextual() => ENTERED.with(|e| e.borrow().last().copied()),
            None => None,
        };
        let mut fields = HashMap::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.spans.lock().unwrap();
        let id = spans.len() as u64 + 1;
        spans.push(Recorded {
            id,
            name: attrs.metadata().name(),
            parent,
            fields,
        });
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.spans.lock().unwrap();
        let recorded = &mut spans[span.into_u64() as usize - 1];
        values.record(&mut Fields(&mut recorded.fields));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, span: &Id) {
        ENTERED.with(|e| e.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &Id) {
        ENTERED.with(|e| {
            let mut entered = e.borrow_mut();
            if let Some(at) = entered.iter().rposition(|&id| id == span.into_u64()) {
                entered.remove(at);
            }
        });
    }
}

/// The process-wide recorder (tests run in parallel: each looks for its own spans).
fn recorder() -> &'static Recorder {
    static RECORDER: OnceLock<&'static Recorder> = OnceLock::new();
    RECORDER.get_or_init(|| {
        let recorder: &'static Recorder = Box::leak(Box::default());
        tracing::subscriber::set_global_default(Forward(recorder)).expect("one subscriber");
        recorder
    })
}

/// The global subscriber, forwarding to the leaked recorder.
struct Forward(&'static Recorder);

impl Subscriber for Forward {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        self.0.enabled(m)
    }
    fn new_span(&self, a: &Attributes<'_>) -> Id {
        self.0.new_span(a)
    }
    fn record(&self, s: &Id, v: &Record<'_>) {
        self.0.record(s, v)
    }
    fn record_follows_from(&self, a: &Id, b: &Id) {
        self.0.record_follows_from(a, b)
    }
    fn event(&self, e: &Event<'_>) {
        self.0.event(e)
    }
    fn enter(&self, s: &Id) {
        self.0.enter(s)
    }
    fn exit(&self, s: &Id) {
        self.0.exit(s)
    }
}

fn spans() -> Vec<Recorded> {
    recorder().spans.lock().unwrap().clone()
}

/// What each `traced` call saw as its trace context, by tag.
fn seen() -> &'static Mutex<HashMap<String, Option<TraceContext>>> {
    static SEEN: OnceLock<Mutex<HashMap<String, Option<TraceContext>>>> = OnceLock::new();
    SEEN.get_or_init(Default::default)
}

/// Records its caller's trace context under `tag`, inside a span of its own.
#[tool]
async fn traced(ctx: RequestContext, tag: String) -> modelctx::Result<String> {
    let inner = tracing::info_span!("inside_tool", tag = tag.as_str());
    let _in = inner.enter();
    seen().lock().unwrap().insert(tag, ctx.trace_context());
    Ok("traced".into())
}

/// Always fails as a tool (a result with `isError`).
#[tool]
async fn broken() -> Result<String, ToolError> {
    Err(ToolError::new("broken on purpose"))
}

/// Refuses its call with a JSON-RPC error.
#[tool]
async fn refuses() -> modelctx::Result<String> {
    Err(McpError::invalid_params("refused on purpose"))
}

fn server() -> McpServer {
    McpServer::new("traced")
        .tool(TracedTool)
        .tool(BrokenTool)
        .tool(RefusesTool)
}

async fn client(legacy: bool) -> Client {
    recorder();
    let mut builder = Client::builder();
    if legacy {
        builder = builder.legacy();
    }
    builder.connect(server()).await.unwrap()
}

/// The request spans of `tools/call` for `tool` whose fields match `pred`.
fn tool_spans(tool: &str, pred: impl Fn(&Recorded) -> bool) -> Vec<Recorded> {
    spans()
        .into_iter()
        .filter(|s| s.name == "mcp.server.request" && s.field("gen_ai.tool.name") == Some(tool))
        .filter(pred)
        .collect()
}

fn traceparent(era: u8) -> String {
    format!("00-4bf92f3577b34da6a3ce929d0e0e47{era:02x}-00f067aa0ba902b7-01")
}

#[tokio::test]
async fn a_tool_call_gets_one_span_with_semconv_fields_in_both_eras() {
    for (legacy, version) in [(true, "2025-11-25"), (false, "2026-07-28")] {
        let client = client(legacy).await;
        let tp = traceparent(u8::from(legacy) + 1);
        let tag = format!("ok-{legacy}");
        let options = RequestOptions::new().trace_context(
            TraceContext::parse(&tp)
                .unwrap()
                .with_tracestate("vendor=x"),
        );
        let result = client
            .call_tool_with("traced", json!({"tag": tag}), &options)
            .await
            .unwrap();
        assert!(!result.is_error);

        let found = tool_spans("traced", |s| s.field("traceparent") == Some(tp.as_str()));
        assert_eq!(found.len(), 1, "legacy={legacy}: {found:#?}");
        let span = &found[0];
        assert_eq!(span.field("otel.name"), Some("tools/call traced"));
        assert_eq!(span.field("otel.kind"), Some("server"));
        assert_eq!(span.field("mcp.method.name"), Some("tools/call"));
        assert_eq!(span.field("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(span.field("mcp.protocol.version"), Some(version));
        assert_eq!(span.field("otel.status_code"), Some("ok"), "{span:#?}");
        assert_eq!(span.field("tracestate"), Some("vendor=x"));
        assert_eq!(span.field("error.type"), None);
        let id = span.field("jsonrpc.request.id").expect("the request id");
        assert!(!id.is_empty());
        let duration: f64 = span
            .field("mcp.server.operation.duration")
            .expect("a duration")
            .parse()
            .unwrap();
        assert!(duration >= 0.0);
        // A 2025 message belongs to a session; a 2026 one does not.
        assert_eq!(
            span.field("mcp.session.id").is_some(),
            legacy,
            "legacy={legacy}: {span:#?}"
        );

        // The handler's own span is a child of the request's.
        let inner: Vec<_> = spans()
            .into_iter()
            .filter(|s| s.name == "inside_tool" && s.field("tag") == Some(tag.as_str()))
            .collect();
        assert_eq!(inner.len(), 1, "{inner:#?}");
        assert_eq!(inner[0].parent, Some(span.id), "{inner:#?} under {span:#?}");

        // The handler reads the same context.
        let seen = seen().lock().unwrap().get(&tag).cloned().flatten();
        let seen = seen.expect("ctx.trace_context() is set");
        assert_eq!(seen.traceparent(), tp);
        assert_eq!(seen.tracestate(), Some("vendor=x"));
        assert_eq!(seen.parent_id(), "00f067aa0ba902b7");
        assert!(seen.sampled());
        client.close().await;
    }
}

#[tokio::test]
async fn failing_calls_record_the_error_type_and_code_in_both_eras() {
    for legacy in [true, false] {
        let client = client(legacy).await;
        let tp = traceparent(u8::from(legacy) + 0x10);
        let options = RequestOptions::new().trace_context(TraceContext::parse(&tp).unwrap());

        // A JSON-RPC error: the code is the error type and the response status code.
        let err = client
            .call_tool_with("refuses", json!({}), &options)
            .await
            .unwrap_err();
        assert_eq!(err.code(), -32602);
        let code = err.code().to_string();
        let found = tool_spans("refuses", |s| s.field("traceparent") == Some(tp.as_str()));
        assert_eq!(found.len(), 1, "legacy={legacy}: {found:#?}");
        assert_eq!(found[0].field("otel.status_code"), Some("error"));
        assert_eq!(found[0].field("error.type"), Some(code.as_str()));
        assert_eq!(
            found[0].field("rpc.response.status_code"),
            Some(code.as_str())
        );

        // A tool result with isError: `tool_error`, and no JSON-RPC code.
        let result = client
            .call_tool_with("broken", json!({}), &options)
            .await
            .unwrap();
        assert!(result.is_error);
        let found = tool_spans("broken", |s| s.field("traceparent") == Some(tp.as_str()));
        assert_eq!(found.len(), 1, "legacy={legacy}: {found:#?}");
        assert_eq!(found[0].field("otel.status_code"), Some("error"));
        assert_eq!(found[0].field("error.type"), Some("tool_error"));
        assert_eq!(found[0].field("rpc.response.status_code"), None);
        client.close().await;
    }
}

#[tokio::test]
async fn notifications_get_spans_and_bad_traceparents_are_ignored() {
    let client = client(true).await;
    // The 2025 handshake's `notifications/initialized` went through the engine with a span.
    let notes: Vec<_> = spans()
        .into_iter()
        .filter(|s| {
            s.name == "mcp.server.notification"
                && s.field("mcp.method.name") == Some("notifications/initialized")
        })
        .collect();
    assert!(!notes.is_empty());
    assert!(notes
        .iter()
        .all(|s| s.field("jsonrpc.request.id").is_none()));
    client.close().await;

    assert!(TraceContext::parse("00-xyz-00f067aa0ba902b7-01").is_none());
    assert!(TraceContext::parse(&format!("{}-extra", traceparent(1))).is_none());
    assert!(
        TraceContext::parse("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_2025_span_names_the_mcp_session_id_and_reads_meta_traceparent() {
    recorder();
    let (port, _stop) = support::sse::serve(server()).await;
    let sid = support::sse::open_session(port, json!({})).await;
    let tp = traceparent(0x20);
    let call = json!({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call", "params": {
        "name": "traced", "arguments": {"tag": "http"},
        "_meta": {"traceparent": tp, "tracestate": "k=v"}}});
    let answer = support::sse::session_call(port, &sid, &call).await;
    assert_eq!(answer["result"]["content"][0]["text"], "traced", "{answer}");
    let found = tool_spans("traced", |s| s.field("traceparent") == Some(tp.as_str()));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].field("mcp.session.id"), Some(sid.as_str()));
    assert_eq!(found[0].field("jsonrpc.request.id"), Some("call-1"));
    assert_eq!(found[0].field("tracestate"), Some("k=v"));
    let seen = seen().lock().unwrap().get("http").cloned().flatten();
    assert_eq!(
        seen.map(|tc| tc.trace_id().to_owned()),
        Some(tp[3..35].to_owned())
    );
}
