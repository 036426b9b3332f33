//! Support for the code `#[tool]` generates. Not a public API: names and shapes may change in
//! any release.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::server::output::ErrorRoute;
use crate::types::JsonObject;

pub use schemars;
pub use serde;
pub use serde_json;

/// A type a tool parameter may have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument",
    label = "this parameter's type must implement serde::Deserialize and schemars::JsonSchema",
    note = "derive them: #[derive(serde::Deserialize, schemars::JsonSchema)], or use a type that has them (String, integers, bool, Vec<T>, Option<T>, ...)"
)]
pub trait ToolArgument: DeserializeOwned + schemars::JsonSchema {}

impl<T: DeserializeOwned + schemars::JsonSchema> ToolArgument for T {}

/// Compile-time check that `T` can be a tool argument (the error lands on the parameter).
pub fn assert_argument<T: ToolArgument>() {}

/// Takes argument `name` out of the arguments: absent is `null` (so `Option` parameters become
/// `None`), a mismatch is a tool error that names the argument.
pub fn take_arg<T: ToolArgument>(args: &mut JsonObject, name: &str) -> Result<T, ErrorRoute> {
    let value = args.remove(name).unwrap_or(Value::Null);
    T::deserialize(value).map_err(|e| ErrorRoute::Tool(format!("{name}: {e}")))
}

/// Like [`take_arg`], with `default` when the argument is absent.
pub fn take_arg_or<T: ToolArgument>(
    args: &mut JsonObject,
    name: &str,
    default: impl FnOnce() -> T,
) -> Result<T, ErrorRoute> {
    match args.remove(name) {
        None | Some(Value::Null) => Ok(default()),
        Some(value) => T::deserialize(value).map_err(|e| ErrorRoute::Tool(format!("{name}: {e}"))),
    }
}

/// The JSON of a default value, for the schema's `"default"`.
pub fn default_json<T: serde::Serialize>(value: &T) -> Option<Value> {
    serde_json::to_value(value).ok()
}

/// Runs a plain (non-async) tool function off the async executor.
pub async fn run_blocking<T, F>(f: F) -> Result<T, ErrorRoute>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        let detail = match e.try_into_panic() {
            Ok(payload) => crate::engine::unwind::panic_message(payload),
            Err(e) => e.to_string(),
        };
        ErrorRoute::Internal(detail)
    })
}

/// Parses a JSON literal given in an attribute (validated by the macro already).
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Parses a JSON object literal the macro already checked.
pub fn json_object(text: &str) -> JsonObject {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// Builds a generated tool. Its schema comes from the macro; if it does not compile (an invalid
/// `pattern`), that is a mistake in the program, reported when the server is built.
pub fn tool_def<S: Send + Sync + 'static>(
    name: &str,
    schema: Value,
    handler: crate::server::ToolHandler<S>,
) -> crate::server::ToolDef<S> {
    match crate::server::ToolDef::with_handler(name, schema, handler) {
        Ok(def) => def,
        Err(e) => panic!("tool `{name}` has an invalid input schema: {}", e.message()),
    }
}

/// Adds the output schema the return type produced.
pub fn with_output<S: Send + Sync + 'static>(
    def: crate::server::ToolDef<S>,
    schema: Value,
    is_object: bool,
) -> crate::server::ToolDef<S> {
    let name = def.definition().name.clone();
    match def.output_schema(schema, is_object) {
        Ok(def) => def,
        Err(e) => panic!(
            "tool `{name}` has an invalid output schema: {}",
            e.message()
        ),
    }
}
