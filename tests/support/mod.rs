//! Helpers shared by the integration tests.
// Each test crate uses part of these, through `mod support;`: `pub` is for the sibling modules.
#![allow(dead_code, unreachable_pub)]

pub mod jwt;
pub mod raw_http;
pub mod redis;
pub mod sse;

use modelctx::transport::RawConnection;
use serde_json::{json, Value};

/// The compiled example `name` (built on demand when a test runs alone).
pub fn example(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>")
        .join("examples");
    let path = dir.join(name);
    if !path.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--example", name])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building example {name}");
    }
    path
}

/// Whether a test may use an outside program (`redis-server`, Node and the TypeScript SDK):
/// true when `present`; otherwise the test is skipped with a one-line notice, unless
/// `MCP_TEST_REQUIRE_<NAME>=1` (set by `.ci/run` after installing it) makes its absence a
/// failure.
pub fn outside_program(name: &str, present: bool, how: &str) -> bool {
    if present {
        return true;
    }
    let var = format!("MCP_TEST_REQUIRE_{}", name.to_ascii_uppercase());
    if std::env::var(&var).as_deref() == Ok("1") {
        panic!("{name} is required ({var}=1) but missing: {how}");
    }
    // Straight to the process's stderr: libtest would swallow `eprintln!` of a passing test.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "notice: skipped, {name} is missing ({how}; {var}=1 makes this a failure)"
    );
    false
}

/// A port on 127.0.0.1 nobody listens on: 1 (tcpmux). A port found free by binding and
/// releasing it could be taken by a server another test starts meanwhile.
pub const CLOSED_PORT: u16 = 1;

/// True when `program --version` runs.
pub fn runs(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The 2025 handshake (`initialize` declaring `capabilities`, then
/// `notifications/initialized`) at the latest 2025 version; returns the initialize answer.
pub async fn handshake_with(conn: &mut RawConnection, capabilities: Value) -> Value {
    initialize(conn, "2025-11-25", capabilities).await
}

/// The 2026 envelope every stateless request carries.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "0.0.1"}
    })
}

/// A request line.
pub fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A 2026 request line: `params` plus the envelope.
pub fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    request(id, method, params)
}

/// Runs the 2025 handshake on a raw connection and returns the initialize result.
pub async fn handshake(conn: &mut RawConnection, version: &str) -> Value {
    initialize(conn, version, json!({"roots": {"listChanged": true}})).await
}

async fn initialize(conn: &mut RawConnection, version: &str, capabilities: Value) -> Value {
    conn.send_json(&request(
        0,
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "legacy-client", "version": "9.9.9"}
        }),
    ))
    .await
    .unwrap();
    let answer = conn.recv_json().await.expect("initialize answered");
    conn.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .unwrap();
    answer
}

/// Sends `line` and returns the next message the server writes.
pub async fn roundtrip(conn: &mut RawConnection, line: &Value) -> Value {
    conn.send_json(line).await.unwrap();
    conn.recv_json().await.expect("an answer")
}
