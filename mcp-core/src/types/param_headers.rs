//! `x-mcp-header` (2026): which tool arguments a tool mirrors into `Mcp-Param-*` HTTP headers,
//! and whether its annotations are valid (`../basic/transports/streamable-http`: a non-empty
//! RFC 9110 token, unique case-insensitively, on a `string`, `integer` or `boolean` property
//! reached only through `properties`).

use serde_json::{Map, Value};

use super::Tool;

/// A tool's mirrored arguments: header name (without the `Mcp-Param-` prefix) and the
/// property path in `arguments`.
pub type ParamHeaders = Vec<(String, Vec<String>)>;

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

impl Tool {
    /// The arguments this tool mirrors into `Mcp-Param-{name}` headers: each header name with
    /// the property path in `arguments`. `Err` says why the annotations are invalid (an HTTP
    /// client then drops the tool from `tools/list`).
    ///
    /// ```
    /// use modelctx_core::types::Tool;
    /// use serde_json::json;
    ///
    /// let tool = Tool::new("weather", "Forecast.", json!({"type": "object", "properties": {
    ///     "region": {"type": "string", "x-mcp-header": "Region"}}}));
    /// assert_eq!(tool.param_headers().unwrap(), vec![("Region".to_owned(), vec!["region".to_owned()])]);
    /// ```
    pub fn param_headers(&self) -> Result<ParamHeaders, String> {
        param_headers(&self.input_schema)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
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
