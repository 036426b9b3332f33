//! [`SchemaValidator`]: a JSON Schema compiled once, with error texts a model can act on.
//!
//! The built-in validator ([`schema_tree`], [`schema_check`]) reads the JSON Schema 2020-12
//! keywords tool schemas use and checks a value in one walk, allocating nothing when the value
//! is valid. A schema that uses any other assertion keyword goes to the `jsonschema` crate when
//! the `jsonschema` feature is on, and is refused when it is off: no rule is silently skipped.
//! Both write the same complaint texts (`tests/schema_builtin.rs` compares them).
//!
//! With the `validation` feature off, [`SchemaValidator::compile`] accepts every schema and
//! [`validate`](SchemaValidator::validate) accepts every value: only serde's checks (types,
//! required fields) remain when arguments are decoded; ranges, lengths, patterns and unknown
//! arguments are no longer refused.

#[cfg(feature = "validation")]
mod schema_check;
#[cfg(feature = "validation")]
mod schema_tree;

use serde_json::Value;

use std::borrow::Cow;

use crate::error::McpError;
use crate::error::{cut_to, echo_capped};

/// A compiled JSON Schema (2020-12).
///
/// The built-in validator checks the keywords tool schemas use (`type`, `properties`,
/// `required`, `additionalProperties`, `items`/`prefixItems`, `enum`, `const`, number and
/// length bounds, `pattern`, `multipleOf`, `uniqueItems`, `allOf`/`anyOf`/`oneOf`/`not`,
/// `if`/`then`/`else`, `$ref`
/// within the schema). A schema that needs more (`patternProperties`, a remote `$ref`,
/// another draft...) is handed to the `jsonschema` crate with the `jsonschema` feature, and
/// refused by [`compile`](Self::compile) without it.
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
    engine: Engine,
}

enum Engine {
    /// The `validation` feature is off: everything passes.
    #[cfg(not(feature = "validation"))]
    Off,
    #[cfg(feature = "validation")]
    Builtin(schema_tree::Tree),
    #[cfg(feature = "jsonschema")]
    Full(Box<jsonschema::Validator>),
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.engine {
            #[cfg(not(feature = "validation"))]
            Engine::Off => "SchemaValidator(off)",
            #[cfg(feature = "validation")]
            Engine::Builtin(_) => "SchemaValidator(built-in)",
            #[cfg(feature = "jsonschema")]
            Engine::Full(_) => "SchemaValidator(jsonschema)",
        })
    }
}

impl SchemaValidator {
    /// Compiles `schema`. A schema that is not valid JSON Schema, or (without the `jsonschema`
    /// feature) one the built-in validator does not read, is an internal error of the server
    /// that declared it, naming what was refused.
    pub fn compile(schema: &Value) -> Result<Self, McpError> {
        #[cfg(feature = "validation")]
        {
            use schema_tree::Tree;
            #[cfg(not(feature = "jsonschema"))]
            use schema_tree::Unreadable;
            match Tree::compile(schema) {
                Ok(tree) => Ok(Self {
                    engine: Engine::Builtin(tree),
                }),
                #[cfg(feature = "jsonschema")]
                Err(why) => {
                    tracing::debug!(reason = %why, "schema validated by the jsonschema crate");
                    let inner = jsonschema::options()
                        .with_draft(jsonschema::Draft::Draft202012)
                        .build(schema)
                        .map_err(|e| McpError::internal(format!("invalid JSON Schema: {e}")))?;
                    Ok(Self {
                        engine: Engine::Full(Box::new(inner)),
                    })
                }
                #[cfg(not(feature = "jsonschema"))]
                Err(Unreadable::Invalid(why)) => {
                    Err(McpError::internal(format!("invalid JSON Schema: {why}")))
                }
                #[cfg(not(feature = "jsonschema"))]
                Err(Unreadable::Unsupported(what)) => Err(McpError::internal(format!(
                    "JSON Schema with {what}: the built-in validator does not check it; \
                     enable the `jsonschema` feature of modelctx to validate it in full"
                ))),
            }
        }
        #[cfg(not(feature = "validation"))]
        {
            let _ = schema;
            Ok(Self {
                engine: Engine::Off,
            })
        }
    }

    /// Checks `instance`; the error names where and which rule was broken, e.g.
    /// `limit: 80 is greater than the maximum of 50`, and never quotes more than 256 bytes of
    /// any one piece of the input (longer values are cut, with their length). Several failures
    /// (at most five) are joined with `; `.
    pub fn validate(&self, instance: &Value) -> Result<(), String> {
        #[cfg(not(feature = "validation"))]
        {
            let Engine::Off = self.engine;
            let _ = instance;
            Ok(())
        }
        #[cfg(feature = "validation")]
        {
            let mut messages: Vec<String> = match &self.engine {
                Engine::Builtin(tree) => {
                    if tree.is_valid(instance) {
                        return Ok(());
                    }
                    tree.complaints(instance)
                        .iter()
                        .take(5)
                        .map(|c| describe(&c.pointer, c.instance, &c.message))
                        .collect()
                }
                #[cfg(feature = "jsonschema")]
                Engine::Full(inner) => inner
                    .iter_errors(instance)
                    .take(5)
                    .map(|e| describe(&e.instance_path().to_string(), e.instance(), &e.to_string()))
                    .collect(),
            };
            messages.dedup();
            if messages.is_empty() {
                Ok(())
            } else {
                Err(messages.join("; "))
            }
        }
    }
}

/// For the `schema_check` fuzz target: the built-in validator reads `schema` (or refuses it)
/// without panicking, and its yes/no pass agrees with its complaints.
#[cfg(all(feature = "fuzzing", feature = "validation"))]
pub(crate) fn check_consistency(schema: &Value, instance: &Value) {
    if let Ok(tree) = schema_tree::Tree::compile(schema) {
        let valid = tree.is_valid(instance);
        let complaints = tree.complaints(instance);
        assert_eq!(
            valid,
            complaints.is_empty(),
            "schema {schema}, value {instance}: {complaints:?}"
        );
    }
}

/// Without the `validation` feature there is no built-in validator to check.
#[cfg(all(feature = "fuzzing", not(feature = "validation")))]
pub(crate) fn check_consistency(_: &Value, _: &Value) {}

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

#[cfg(all(test, feature = "jsonschema"))]
mod tests {
    use super::SchemaValidator;
    use serde_json::json;

    /// With the `jsonschema` feature, a schema beyond the built-in validator is checked in
    /// full by the `jsonschema` crate, with the same complaint format.
    #[test]
    fn a_schema_beyond_the_builtin_validator_goes_to_jsonschema() {
        let v = SchemaValidator::compile(&json!({
            "type": "object",
            "patternProperties": {"^n_": {"type": "integer", "maximum": 5}},
            "contains": true
        }))
        .unwrap();
        assert!(format!("{v:?}").contains("jsonschema"));
        assert_eq!(v.validate(&json!({"n_a": 3, "x": "free"})), Ok(()));
        assert_eq!(
            v.validate(&json!({"n_a": 9})).unwrap_err(),
            "n_a: 9 is greater than the maximum of 5"
        );
        let builtin = SchemaValidator::compile(&json!({"type": "integer"})).unwrap();
        assert!(format!("{builtin:?}").contains("built-in"));
    }
}
