//! [`Reply`]: what a handler in the table answers with: a JSON value, or a result already
//! encoded once (the high-level `tools/call`), which reaches the wire without a `Value` ever
//! being built unless a middleware asks to see it.

use serde_json::value::RawValue;
use serde_json::Value;

/// A handler's result.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A result as a JSON value.
    Value(Value),
    /// A result object encoded once, with neither `resultType` nor `_meta` of its own.
    Encoded(Encoded),
}

/// A result object encoded once.
#[derive(Debug)]
pub(crate) struct Encoded {
    /// The object, compact (as serde_json writes it).
    pub(crate) raw: Box<RawValue>,
    /// A tool result with `isError: true` (for the span).
    pub(crate) is_error: bool,
}

impl Reply {
    /// The result as a JSON value (parsed again only for an encoded one).
    pub(crate) fn into_value(self) -> Value {
        match self {
            Self::Value(value) => value,
            Self::Encoded(encoded) => {
                serde_json::from_str(encoded.raw.get()).unwrap_or(Value::Object(Default::default()))
            }
        }
    }
}

/// `raw` (a compact JSON object) with `tail` (object members, comma-separated, no braces)
/// written before its closing brace.
pub(crate) fn append_members(raw: &str, tail: &str) -> String {
    let body = raw.strip_suffix('}').unwrap_or(raw);
    let mut out = String::with_capacity(raw.len() + tail.len() + 2);
    out.push_str(body);
    if body.len() > 1 {
        out.push(',');
    }
    out.push_str(tail);
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::append_members;

    #[test]
    fn members_are_appended_to_empty_and_filled_objects() {
        assert_eq!(append_members("{}", r#""a":1"#), r#"{"a":1}"#);
        assert_eq!(
            append_members(r#"{"x":[]}"#, r#""a":1"#),
            r#"{"x":[],"a":1}"#
        );
    }
}
