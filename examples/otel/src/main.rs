//! The SDK's per-message `tracing` spans exported over OTLP with `tracing-opentelemetry`.
//!
//! Every inbound request and notification gets one span (`mcp.server.request`,
//! `mcp.server.notification`) whose fields follow the OpenTelemetry semantic conventions for
//! MCP (`otel.name` "tools/call add", `mcp.method.name`, `jsonrpc.request.id`,
//! `mcp.session.id`, `gen_ai.tool.name`, `error.type`, ...); `tracing-opentelemetry` turns
//! them into OTel spans. The caller's W3C `traceparent` from `params._meta` is made the span's
//! remote parent by a middleware (the SDK itself does not depend on OpenTelemetry). The
//! layer and that middleware are this crate's library (`src/lib.rs`); `tests/span_tree.rs`
//! checks the spans they export with an in-memory exporter.
//!
//! Run a collector (e.g. `docker run -p 4318:4318 jaegertracing/all-in-one`), then
//! `cd examples/otel && cargo run`; an MCP client at http://127.0.0.1:8000/mcp produces
//! traces (service `mcp-otel-example`).

use modelctx::prelude::*;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    tracing::info!(a, b, "adding");
    a + b
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name("mcp-otel-example")
                .build(),
        )
        .build();
    tracing_subscriber::registry()
        .with(mcp_otel_example::layer(provider.tracer("mcp")))
        .init();

    let mut server = McpServer::new("otel-example").tool(AddTool);
    // The message's span is the current span inside middleware: give it the caller's trace
    // as its remote parent.
    server
        .lowlevel()
        .middleware(mcp_otel_example::adopt_remote_parent);

    let served = server.serve_http("127.0.0.1:8000");
    tokio::select! {
        result = served => result.map_err(|e| e.to_string())?,
        _ = tokio::signal::ctrl_c() => {}
    }
    provider.shutdown()?;
    Ok(())
}
