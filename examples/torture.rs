//! A server with tools that misbehave, for robustness tests (`tests/bad_input.rs`,
//! `tests/client.rs`) and floods: `add` (validated), `echo`, `panic` (panics with a message and a
//! file path), `hang` (never returns), `hangs_dropped` (how many `hang` calls were cancelled),
//! `huge` (an 8 MiB result), `exit` (the process exits with status 3 mid-call), `garbage`
//! (writes a line that is not JSON to stdout, then hangs), `wait_for_cancel` (cleans up when
//! cancelled; `cleanups` counts them), `steps` (sends progress).
//!
//! Run: `cargo run --example torture` (stdio) or `cargo run --example torture -- --http 127.0.0.1:0`.
//!
//! On stdio, limits can be set small for tests: `TORTURE_MAX_IN_FLIGHT`,
//! `TORTURE_MAX_OUTBOUND_BYTES`, `TORTURE_WRITE_TIMEOUT_MS`, `TORTURE_SHUTDOWN_GRACE_MS`
//! (see `modelctx::lowlevel::ServerOptions`).

use modelctx::prelude::*;

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Echoes the text.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// Panics, leaking nothing: the wire shows a generic error.
#[tool]
async fn panic() -> String {
    let secret = std::path::Path::new("/srv/app/src/secret.rs");
    panic!(
        "boom in {}: {}",
        secret.display(),
        std::any::type_name::<McpServer>()
    );
}

/// How many `hang` calls were dropped (cancelled) so far.
pub static HANGS_DROPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts a dropped `hang` call.
struct DropCount;

impl Drop for DropCount {
    fn drop(&mut self) {
        HANGS_DROPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Never returns (until cancelled, which `HANGS_DROPPED` counts).
#[tool]
async fn hang() -> String {
    let _counted = DropCount;
    std::future::pending::<()>().await;
    unreachable!("pending never completes")
}

/// How many `hang` calls were cancelled so far.
#[tool]
async fn hangs_dropped() -> u64 {
    HANGS_DROPPED.load(std::sync::atomic::Ordering::SeqCst) as u64
}

/// How many `wait_for_cancel` calls cleaned up after their cancellation.
pub static CLEANUPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Waits until the call is cancelled, then cleans up cooperatively (counted by `cleanups`).
#[tool]
async fn wait_for_cancel(ctx: RequestContext) -> String {
    ctx.cancelled().await;
    // Cleanup that needs to await still runs: the handler is given the shutdown grace.
    tokio::task::yield_now().await;
    CLEANUPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    "cancelled".into()
}

/// How many `wait_for_cancel` calls cleaned up.
#[tool]
async fn cleanups() -> u64 {
    CLEANUPS.load(std::sync::atomic::Ordering::SeqCst) as u64
}

/// Reports `steps` progress notifications (1 of n .. n of n), then answers.
#[tool]
async fn steps(ctx: RequestContext, steps: u32) -> String {
    for done in 1..=steps {
        ctx.progress(done).total(steps).message("step").await;
    }
    format!("{steps} steps")
}

/// Exits the process with status 3 while the call is open.
#[tool]
async fn exit() -> String {
    std::process::exit(3)
}

/// Writes a line that is not JSON-RPC to stdout, then never returns.
#[tool]
async fn garbage() -> String {
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"this is not json\n");
        let _ = out.flush();
    }
    std::future::pending::<()>().await;
    unreachable!("pending never completes")
}

/// Returns 8 MiB of text.
#[tool]
async fn huge() -> String {
    "x".repeat(8 * 1024 * 1024)
}

pub fn server() -> McpServer {
    McpServer::new("torture")
        .tool(AddTool)
        .tool(EchoTool)
        .tool(PanicTool)
        .tool(HangTool)
        .tool(HugeTool)
        .tool(HangsDroppedTool)
        .tool(ExitTool)
        .tool(GarbageTool)
        .tool(WaitForCancelTool)
        .tool(CleanupsTool)
        .tool(StepsTool)
}

#[tokio::main]
async fn main() -> modelctx::Result<()> {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("--http") {
        let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".into());
        let listener = tokio::net::TcpListener::bind(addr).await?;
        println!("http://{}/mcp", listener.local_addr()?);
        let config = modelctx::transport::HttpConfig::default();
        return server()
            .serve_http_on(listener, config, std::future::pending())
            .await;
    }
    let mut server = server().into_server();
    limits_from_env(server.options_mut());
    server.serve_stdio().await
}

/// Reads the `TORTURE_*` limits, when set.
fn limits_from_env(options: &mut modelctx::lowlevel::ServerOptions) {
    let var = |name: &str| std::env::var(name).ok()?.parse::<u64>().ok();
    let ms = std::time::Duration::from_millis;
    if let Some(n) = var("TORTURE_MAX_IN_FLIGHT") {
        options.max_in_flight = n as usize;
    }
    if let Some(n) = var("TORTURE_MAX_OUTBOUND_BYTES") {
        options.max_outbound_bytes = n as usize;
    }
    if let Some(n) = var("TORTURE_WRITE_TIMEOUT_MS") {
        options.write_timeout = ms(n);
    }
    if let Some(n) = var("TORTURE_SHUTDOWN_GRACE_MS") {
        options.shutdown_grace = ms(n);
    }
}
