//! A Streamable HTTP server with small, configurable limits, for the hardening tests
//! (`tests/hardening_http.rs`) and the probe (`scripts/http-probe.sh`): hostile clients are
//! cheap to play against it. Tools: `hello`; `progress` (three progress notifications, whose
//! token is the client's, then an answer); `stream` (`count` progress notifications carrying
//! `size` bytes of message each); `hang` (one progress notification, then never returns).
//!
//! Run: `cargo run --example http_limits` prints `http://127.0.0.1:<port>/mcp`. Limits from the
//! environment (unset: the defaults of `HttpConfig` and `ServerOptions`): `LIMITS_MAX_SESSIONS`,
//! `LIMITS_SESSIONS_PER_CLIENT`, `LIMITS_STORE_SESSION_BYTES`, `LIMITS_STORE_TOTAL_BYTES`,
//! `LIMITS_STREAM_BUFFER_BYTES`, `LIMITS_WRITE_TIMEOUT_MS`, `LIMITS_HEADER_TIMEOUT_MS`,
//! `LIMITS_MAX_CONNECTIONS`, `LIMITS_CONNECTIONS_PER_CLIENT`, `LIMITS_MAX_IN_FLIGHT`.

use std::time::Duration;

use modelctx::prelude::*;

/// Say hello.
#[tool]
async fn hello() -> String {
    "hello".into()
}

/// Three progress notifications (with the client's token), then an answer.
#[tool]
async fn progress(ctx: RequestContext) -> String {
    for i in 1..=3 {
        ctx.progress(i).total(3).await;
    }
    "done".into()
}

/// `count` progress notifications, each with a message of `size` bytes.
#[tool]
async fn stream(ctx: RequestContext, count: u32, size: u32) -> String {
    let message = "m".repeat(size as usize);
    for i in 0..count {
        if ctx.is_cancelled() {
            break;
        }
        ctx.progress(i).total(count).message(&message).await;
    }
    "streamed".into()
}

/// One progress notification, then never returns (until cancelled).
#[tool]
async fn hang(ctx: RequestContext) -> String {
    ctx.progress(0).await;
    std::future::pending::<()>().await;
    unreachable!("pending never completes")
}

fn var(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.parse().ok()
}

#[tokio::main]
async fn main() -> modelctx::Result<()> {
    let ms = Duration::from_millis;
    let mut config = modelctx::transport::HttpConfig::default();
    if let Some(n) = var("LIMITS_MAX_SESSIONS") {
        config.max_sessions = n as usize;
    }
    if let Some(n) = var("LIMITS_SESSIONS_PER_CLIENT") {
        config.max_sessions_per_client = n as usize;
    }
    if let Some(n) = var("LIMITS_STORE_SESSION_BYTES") {
        config.event_store_session_bytes = n as usize;
    }
    if let Some(n) = var("LIMITS_STORE_TOTAL_BYTES") {
        config.event_store_total_bytes = n as usize;
    }
    if let Some(n) = var("LIMITS_STREAM_BUFFER_BYTES") {
        config.stream_buffer_bytes = n as usize;
    }
    if let Some(n) = var("LIMITS_WRITE_TIMEOUT_MS") {
        config.write_timeout = ms(n);
    }
    if let Some(n) = var("LIMITS_HEADER_TIMEOUT_MS") {
        config.header_read_timeout = ms(n);
    }
    if let Some(n) = var("LIMITS_MAX_CONNECTIONS") {
        config.max_connections = n as usize;
    }
    if let Some(n) = var("LIMITS_CONNECTIONS_PER_CLIENT") {
        config.max_connections_per_client = n as usize;
    }
    let mut server = McpServer::new("http-limits")
        .version("1.0.0")
        .tool(HelloTool)
        .tool(ProgressTool)
        .tool(StreamTool)
        .tool(HangTool)
        .into_server();
    if let Some(n) = var("LIMITS_MAX_IN_FLIGHT") {
        server.options_mut().max_in_flight = n as usize;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://{}/mcp", listener.local_addr()?);
    server
        .serve_http_on(listener, config, std::future::pending())
        .await
}
