//! [`SchemaValidator`]: a JSON Schema compiled once, with error texts a model can act on.
//!
//! With the `validation` feature off, [`SchemaValidator::compile`] accepts every schema and
//! [`validate`](SchemaValidator::validate) accepts every value: only serde's checks (types,
//! required fields) remain when arguments are decoded; ranges, lengths, patterns and unknown
//! arguments are no longer refused.

use serde_json::Value;

use std::borrow::Cow;

use crate::error::McpError;
use crate::error::{cut_to, echo_capped};

/// A compiled JSON Schema (2020-12 unless the schema names another dialect).
///
/// ```
/// # // Runs with the default `validation` feature.
/// use modelctx_core::server::SchemaValidator;
/// use serde_json::json;
///
/// let v = SchemaValidator::compile(&json!({
///     "type": "object",
///     "properties": {"limit": {"type": "integer", "maximum": 50}},
///     "additionalProperties": false
/// })).unwrap();
/// assert_eq!(
///     v.validate(&json!({"limit": 80})).unwrap_err(),
///     "limit: 80 is greater than the maximum of 50"
/// );
/// assert!(v.validate(&json!({"limit": 5})).is_ok());
/// ```
pub struct SchemaValidator {
    #[cfg(feature = "validation")]
    inner: jsonschema::Validator,
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchemaValidator")
    }
}

impl SchemaValidator {
    /// Compiles `schema`. A schema that is not valid JSON Schema is `-32602`-free: it is an
    /// internal error of the server that declared it.
    pub fn compile(schema: &Value) -> Result<Self, McpError> {
        #[cfg(feature = "validation")]
        {
            let inner = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(schema)
                .map_err(|e| McpError::internal(format!("invalid JSON Schema: {e}")))?;
            Ok(Self { inner })
        }
        #[cfg(not(feature = "validation"))]
        {
            let _ = schema;
            Ok(Self {})
        }
    }

    /// Checks `instance`; the error names where and which rule was broken, e.g.
    /// `limit: 80 is greater than the maximum of 50`, and never quotes more than 256 bytes of
    /// any one piece of the input (longer values are cut, with their length). Several failures
    /// are joined with `; `.
    pub fn validate(&self, instance: &Value) -> Result<(), String> {
        #[cfg(feature = "validation")]
        {
            let mut messages: Vec<String> = self
                .inner
                .iter_errors(instance)
                .take(5)
                .map(|e| describe(&e.instance_path().to_string(), e.instance(), &e.to_string()))
                .collect();
            messages.dedup();
            if messages.is_empty() {
                Ok(())
            } else {
                Err(messages.join("; "))
            }
        }
        #[cfg(not(feature = "validation"))]
        {
            let _ = instance;
            Ok(())
        }
    }
}

/// The longest one schema complaint may be, in bytes (a backstop: the offending value and its
/// path are already cut to 256 bytes each, but a rule's text may quote more of the input, e.g.
/// an unexpected property's name). Longer complaints are cut, with their length.
#[cfg_attr(not(feature = "validation"), allow(dead_code))]
const MAX_COMPLAINT_BYTES: usize = 512;

/// `path: message`, with the offending value and the path capped by [`echo_capped`] and the
/// whole text by [`MAX_COMPLAINT_BYTES`].
#[cfg_attr(not(feature = "validation"), allow(dead_code))]
fn describe(pointer: &str, instance: &Value, message: &str) -> String {
    let shown = instance.to_string();
    let capped = echo_capped(&shown);
    let message = match capped {
        Cow::Borrowed(_) => Cow::Borrowed(message),
        Cow::Owned(capped) => Cow::Owned(message.replace(&shown, &capped)),
    };
    let path = pointer.trim_start_matches('/').replace('/', ".");
    let text = if path.is_empty() {
        message.into_owned()
    } else {
        format!("{}: {message}", echo_capped(&path))
    };
    cut_to(&text, MAX_COMPLAINT_BYTES).into_owned()
}
