//! Shared pieces of the benchmark binaries: the wire messages every implementation answers,
//! and rmcp's one-tool server.

pub mod rmcp_adder;

/// The `tools/call` every implementation answers: `add(a, b)` as text.
pub fn call_line(id: u64, modern: bool) -> String {
    let meta = if modern {
        r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
    } else {
        ""
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{id},"b":1}}{meta}}}}}"#
    )
}

/// The 2025 handshake: `initialize` (id 0) and `notifications/initialized`.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
/// Sent after the `initialize` answer.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
