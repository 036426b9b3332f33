//! The `Mcp-Param-*` headers of one `tools/call` (2026 HTTP), from the tool's `x-mcp-header`
//! arguments ([`Tool::param_headers`](crate::types::Tool::param_headers)).

use serde_json::Value;

use crate::transport::encode_header_value;
use crate::types::ParamHeaders;

/// The `Mcp-Param-*` headers of one call.
pub(crate) fn headers_for(mirrored: &ParamHeaders, arguments: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, path) in mirrored {
        let mut value = arguments;
        for key in path {
            match value.get(key) {
                Some(v) => value = v,
                None => {
                    value = &Value::Null;
                    break;
                }
            }
        }
        let text = match value {
            Value::String(s) => encode_header_value(s),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            _ => continue,
        };
        out.push((format!("Mcp-Param-{name}"), text));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Tool;
    use serde_json::json;

    #[test]
    fn nested_properties_are_found_and_values_encoded() {
        let tool = Tool::new(
            "t",
            "T.",
            json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {
                "n": {"type": "integer", "x-mcp-header": "N"}}}}}),
        );
        let found = tool.param_headers().unwrap();
        let headers = headers_for(&found, &json!({"region": "Zürich", "opts": {"n": 42}}));
        assert_eq!(
            headers,
            vec![
                ("Mcp-Param-Region".into(), "=?base64?WsO8cmljaA==?=".into()),
                ("Mcp-Param-N".into(), "42".into())
            ]
        );
    }
}
