//! The SDK's per-message spans as OpenTelemetry exports them: this crate's layer and
//! remote-parent middleware over an `opentelemetry_sdk` tracer provider with the in-memory
//! exporter, a server with a tool served in memory and driven with raw JSON-RPC lines. Checked
//! on the exported `SpanData`: names, kind, status, the attributes after the MCP semantic
//! conventions, the caller's `traceparent` as remote parent, and the tool's own span as a
//! child of the request's.
//!
//! Tests run in parallel against one global subscriber: each uses trace ids of its own and
//! looks only at its spans.

use std::sync::OnceLock;
use std::time::Duration;

use modelctx::prelude::*;
use modelctx::transport::RawConnection;
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{json, Value};
use tracing_subscriber::layer::SubscriberExt as _;

/// The caller's span id in every `traceparent` sent here.
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// A `traceparent` (sampled) of trace `4bf92f3577b34da6a3ce929d0e0e47{n}`.
fn traceparent(n: u8) -> String {
    format!("00-{}-{CALLER_SPAN}-01", trace_hex(n))
}

fn trace_hex(n: u8) -> String {
    format!("4bf92f3577b34da6a3ce929d0e0e47{n:02x}")
}

fn trace_id(n: u8) -> TraceId {
    TraceId::from_hex(&trace_hex(n)).expect("a valid trace id")
}

fn caller_span() -> SpanId {
    SpanId::from_hex(CALLER_SPAN).expect("a valid span id")
}

struct Otel {
    provider: SdkTracerProvider,
    exporter: InMemorySpanExporter,
}

/// The process-wide subscriber: the example's layer exporting to an in-memory exporter.
fn otel() -> &'static Otel {
    static OTEL: OnceLock<Otel> = OnceLock::new();
    OTEL.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(mcp_otel_example::layer(provider.tracer("span-tree-test")));
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        Otel { provider, exporter }
    })
}

/// Flushes the provider and returns the finished spans of trace `n`, waiting (up to 5 s) until
/// there are at least `count` of them: a span is exported once it closes, which can be just
/// after its answer was written.
async fn spans_of_trace(n: u8, count: usize) -> Vec<SpanData> {
    let otel = otel();
    let id = trace_id(n);
    for _ in 0..500 {
        otel.provider.force_flush().expect("flushed");
        let spans: Vec<SpanData> = otel
            .exporter
            .get_finished_spans()
            .expect("the exporter's spans")
            .into_iter()
            .filter(|s| s.span_context.trace_id() == id)
            .collect();
        if spans.len() >= count {
            return spans;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("fewer than {count} spans of trace {id} were exported");
}

/// The one span named `name` among `spans`.
fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found: Vec<_> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one span {name:?} in {spans:#?}");
    found[0]
}

/// The string attribute `key` (`None` when absent; a panic when it is not a string).
fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a str> {
    let kv = span.attributes.iter().find(|kv| kv.key.as_str() == key)?;
    match &kv.value {
        opentelemetry::Value::String(s) => Some(s.as_str()),
        other => panic!("attribute {key} is not a string: {other:?}"),
    }
}

/// Asserts what every message span carries: kind server, the method, the protocol version,
/// the caller's trace as remote parent, and a duration.
fn assert_message_span(span: &SpanData, method: &str, version: &str, trace: u8) {
    assert_eq!(span.span_kind, SpanKind::Server, "{span:#?}");
    assert_eq!(attr(span, "mcp.method.name"), Some(method), "{span:#?}");
    assert_eq!(
        attr(span, "mcp.protocol.version"),
        Some(version),
        "{span:#?}"
    );
    assert_eq!(attr(span, "traceparent"), Some(traceparent(trace).as_str()));
    assert_eq!(span.span_context.trace_id(), trace_id(trace), "{span:#?}");
    assert_eq!(span.parent_span_id, caller_span(), "{span:#?}");
    assert!(span.parent_span_is_remote, "{span:#?}");
    assert!(span.span_context.is_sampled());
    let duration = span
        .attributes
        .iter()
        .find(|kv| kv.key.as_str() == "mcp.server.operation.duration")
        .map(|kv| kv.value.clone());
    match duration {
        Some(opentelemetry::Value::F64(seconds)) => assert!((0.0..5.0).contains(&seconds)),
        other => panic!("mcp.server.operation.duration: {other:?} in {span:#?}"),
    }
}

/// Adds two integers inside a span of its own.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    let _in = tracing::info_span!("add.compute", a, b).entered();
    a + b
}

/// Refuses its call with a JSON-RPC error.
#[tool]
async fn refuses() -> modelctx::Result<String> {
    Err(McpError::invalid_params("refused on purpose"))
}

async fn connect() -> RawConnection {
    otel();
    let mut server = McpServer::new("span-tree").tool(AddTool).tool(RefusesTool);
    server
        .lowlevel()
        .middleware(mcp_otel_example::adopt_remote_parent);
    RawConnection::open(server).await.expect("served in memory")
}

async fn roundtrip(conn: &mut RawConnection, line: Value) -> Value {
    conn.send_json(&line).await.expect("sent");
    conn.recv_json().await.expect("an answer")
}

/// A 2026 request: `params` plus the envelope and the caller's trace context.
fn modern(id: Value, method: &str, mut params: Value, trace: u8) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "span-tree-test", "version": "0.0.1"},
        "traceparent": traceparent(trace),
        "tracestate": "vendor=x,other=y",
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn a_2026_tool_call_is_a_server_span_under_the_callers_trace_with_the_tools_span_below() {
    let mut conn = connect().await;
    let call = modern(
        json!("otel-call-1"),
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        0x01,
    );
    let answer = roundtrip(&mut conn, call).await;
    assert_eq!(answer["id"], "otel-call-1", "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "5", "{answer}");
    conn.close().await;

    let spans = spans_of_trace(0x01, 2).await;
    assert_eq!(
        spans.len(),
        2,
        "the request's span and the tool's: {spans:#?}"
    );
    let call = one(&spans, "tools/call add");
    assert_message_span(call, "tools/call", "2026-07-28", 0x01);
    assert_eq!(call.status, Status::Ok, "{call:#?}");
    assert_eq!(attr(call, "jsonrpc.request.id"), Some("otel-call-1"));
    assert_eq!(attr(call, "gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(attr(call, "gen_ai.tool.name"), Some("add"));
    assert_eq!(attr(call, "tracestate"), Some("vendor=x,other=y"));
    // The caller's tracestate travels on in the span context.
    assert_eq!(call.span_context.trace_state().header(), "vendor=x,other=y");
    // A 2026 message belongs to no session; it did not fail.
    assert_eq!(attr(call, "mcp.session.id"), None);
    assert_eq!(attr(call, "error.type"), None);
    assert_eq!(attr(call, "rpc.response.status_code"), None);

    // The tool's span: same trace, a local child of the request's span.
    let inner = one(&spans, "add.compute");
    assert_eq!(inner.span_kind, SpanKind::Internal);
    assert_eq!(inner.span_context.trace_id(), trace_id(0x01));
    assert_eq!(
        inner.parent_span_id,
        call.span_context.span_id(),
        "{inner:#?}"
    );
    assert!(!inner.parent_span_is_remote);
    assert_ne!(inner.span_context.span_id(), call.span_context.span_id());
    let a = inner.attributes.iter().find(|kv| kv.key.as_str() == "a");
    assert_eq!(a.map(|kv| &kv.value), Some(&opentelemetry::Value::I64(2)));
}

#[tokio::test]
async fn a_call_refused_with_a_json_rpc_error_records_the_code_and_an_error_status() {
    let mut conn = connect().await;
    let call = modern(json!(2), "tools/call", json!({"name": "refuses"}), 0x02);
    let answer = roundtrip(&mut conn, call).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    conn.close().await;

    let spans = spans_of_trace(0x02, 1).await;
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let call = one(&spans, "tools/call refuses");
    assert_message_span(call, "tools/call", "2026-07-28", 0x02);
    assert!(matches!(call.status, Status::Error { .. }), "{call:#?}");
    assert_eq!(attr(call, "jsonrpc.request.id"), Some("2"));
    assert_eq!(attr(call, "gen_ai.tool.name"), Some("refuses"));
    assert_eq!(attr(call, "error.type"), Some("-32602"));
    assert_eq!(attr(call, "rpc.response.status_code"), Some("-32602"));
}

#[tokio::test]
async fn a_2025_session_names_its_session_on_the_notification_and_request_spans() {
    let mut conn = connect().await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "span-tree-test", "version": "0.0.1"}}});
    let answer = roundtrip(&mut conn, init).await;
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized",
        "params": {"_meta": {"traceparent": traceparent(0x03)}}});
    conn.send_json(&initialized).await.expect("sent");
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "add", "arguments": {"a": 40, "b": 2},
        "_meta": {"traceparent": traceparent(0x04)}}});
    let answer = roundtrip(&mut conn, call).await;
    assert_eq!(answer["result"]["content"][0]["text"], "42", "{answer}");
    conn.close().await;

    let notes = spans_of_trace(0x03, 1).await;
    assert_eq!(notes.len(), 1, "{notes:#?}");
    let note = one(&notes, "notifications/initialized");
    assert_message_span(note, "notifications/initialized", "2025-11-25", 0x03);
    assert_eq!(attr(note, "jsonrpc.request.id"), None, "{note:#?}");
    let session = attr(note, "mcp.session.id").expect("the session id");
    assert!(!session.is_empty());

    let spans = spans_of_trace(0x04, 2).await;
    let call = one(&spans, "tools/call add");
    assert_message_span(call, "tools/call", "2025-11-25", 0x04);
    assert_eq!(call.status, Status::Ok);
    assert_eq!(attr(call, "jsonrpc.request.id"), Some("7"));
    assert_eq!(attr(call, "mcp.session.id"), Some(session));
    assert_eq!(attr(call, "tracestate"), None);
    let inner = one(&spans, "add.compute");
    assert_eq!(inner.parent_span_id, call.span_context.span_id());
}
