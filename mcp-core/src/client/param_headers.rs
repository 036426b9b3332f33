//! `x-mcp-header` on the client (2026 HTTP): which tool arguments a tool mirrors into
//! `Mcp-Param-*` headers, whether its annotations are valid (a tool with an invalid one is
//! dropped from `tools/list`), and the header values for one call.

use serde_json::{Map, Value};

use crate::transport::encode_header_value;

/// A tool's mirrored arguments: header name (without the `Mcp-Param-` prefix) and the
/// property path in `arguments`.
pub(crate) type ParamHeaders = Vec<(String, Vec<String>)>;

/// The annotations of `schema`, or why they make the tool invalid.
pub(crate) fn param_headers(schema: &Map<String, Value>) -> Result<ParamHeaders, String> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for (name, _) in &found {
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!("x-mcp-header `{name}` appears twice"));
        }
        seen.push(lower);
    }
    Ok(found)
}

fn walk(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut ParamHeaders,
) -> Result<(), String> {
    for (key, value) in schema {
        match (key.as_str(), value) {
            ("x-mcp-header", header) => {
                if !reachable || path.is_empty() {
                    return Err(
                        "x-mcp-header on a property not reachable through `properties`".to_owned(),
                    );
                }
                let Value::String(header) = header else {
                    return Err("x-mcp-header is not a string".to_owned());
                };
                check_name(header)?;
                match schema.get("type").and_then(Value::as_str) {
                    Some("string" | "integer" | "boolean") => {}
                    other => {
                        return Err(format!(
                            "x-mcp-header `{header}` is on a property of type {}",
                            other.unwrap_or("(none)")
                        ))
                    }
                }
                found.push((header.clone(), path.clone()));
            }
            ("properties", Value::Object(props)) => {
                for (name, prop) in props {
                    if let Value::Object(prop) = prop {
                        path.push(name.clone());
                        walk(prop, path, reachable, found)?;
                        path.pop();
                    }
                }
            }
            (_, Value::Object(inner)) => walk(inner, &mut path.clone(), false, found)?,
            (_, Value::Array(items)) => {
                for item in items {
                    if let Value::Object(inner) = item {
                        walk(inner, &mut path.clone(), false, found)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// An RFC 9110 token: one or more of `!#$%&'*+-.^_`|~`, digits and letters.
fn check_name(name: &str) -> Result<(), String> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(tchar) {
        return Err(format!("x-mcp-header `{name}` is not a valid header name"));
    }
    Ok(())
}

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
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn nested_properties_are_found_and_values_encoded() {
        let s = schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {
                "n": {"type": "integer", "x-mcp-header": "N"}}}}}));
        let found = param_headers(&s).unwrap();
        let headers = headers_for(&found, &json!({"region": "Zürich", "opts": {"n": 42}}));
        assert_eq!(
            headers,
            vec![
                ("Mcp-Param-Region".into(), "=?base64?WsO8cmljaA==?=".into()),
                ("Mcp-Param-N".into(), "42".into())
            ]
        );
    }

    #[test]
    fn invalid_annotations_are_refused() {
        for bad in [
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "has space"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "array", "items":
                {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"properties": {
                "a": {"type": "string", "x-mcp-header": "X"},
                "b": {"type": "string", "x-mcp-header": "x"}}}),
        ] {
            assert!(param_headers(&schema(bad.clone())).is_err(), "{bad}");
        }
    }
}
