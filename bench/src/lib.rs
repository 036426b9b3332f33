//! Shared pieces of the benchmark binaries: the wire messages every implementation answers,
//! and rmcp's one-tool server.

pub mod client_load;
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

/// What the raw limits answer (no MCP machinery): the response to `msg`, or `None` for a
/// notification. `initialize` and `tools/call add` get real answers, anything else `{}`.
pub fn raw_answer(msg: &serde_json::Value, name: &str) -> Option<serde_json::Value> {
    use serde_json::json;
    let id = msg.get("id").filter(|id| !id.is_null())?;
    let result = match msg["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "1"}
        }),
        Some("tools/call") => {
            let args = &msg["params"]["arguments"];
            let sum = args["a"]
                .as_i64()
                .unwrap_or(0)
                .wrapping_add(args["b"].as_i64().unwrap_or(0));
            json!({"content": [{"type": "text", "text": sum.to_string()}], "isError": false})
        }
        _ => json!({}),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}
