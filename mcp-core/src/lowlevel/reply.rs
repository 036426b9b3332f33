//! [`Reply`]: what a handler in the table answers with: a JSON value, or a result already
//! encoded once (the high-level `tools/call`), which reaches the wire without a `Value` ever
//! being built unless a middleware asks to see it.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::Value;

/// A handler's result.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A result as a JSON value.
    Value(Value),
    /// A result object encoded once, with neither `resultType` nor `_meta` of its own.
    Encoded(Encoded),
    /// A result object of one member whose value was encoded before the request came (the
    /// whole `tools/list` page, encoded once per change): written into the answer as it is.
    Prebuilt {
        /// The member's name (plain: written between quotes as it is).
        field: &'static str,
        /// Its value.
        value: Arc<RawValue>,
    },
}

/// A result object encoded once.
#[derive(Debug)]
pub(crate) struct Encoded {
    /// The object, compact, as serde_json wrote it (kept as it was written: no copy to shrink
    /// it, since it is copied into the answer's line next).
    pub(crate) text: String,
    /// A tool result with `isError: true` (for the span).
    pub(crate) is_error: bool,
}

impl Reply {
    /// The result as a JSON value (parsed again only for an encoded one).
    pub(crate) fn into_value(self) -> Value {
        match self {
            Self::Value(value) => value,
            Self::Encoded(encoded) => {
                serde_json::from_str(&encoded.text).unwrap_or(Value::Object(Default::default()))
            }
            Self::Prebuilt { field, value } => {
                let value = serde_json::from_str(value.get()).unwrap_or(Value::Null);
                Value::Object([(field.to_owned(), value)].into_iter().collect())
            }
        }
    }

    /// A tool result with `isError: true` (for the span).
    pub(crate) fn is_error(&self) -> bool {
        match self {
            Self::Value(value) => value.get("isError") == Some(&Value::Bool(true)),
            Self::Encoded(encoded) => encoded.is_error,
            Self::Prebuilt { .. } => false,
        }
    }
}
