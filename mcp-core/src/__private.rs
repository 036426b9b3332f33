//! Support for the code `#[tool]` generates. Not a public API: names and shapes may change in
//! any release.

use serde_json::Value;

use crate::server::output::ErrorRoute;
use crate::types::JsonObject;

pub use schemars;
pub use serde;
pub use serde_json;

/// The parts of a `Result` type, so a one-argument alias (`io::Result<T>`, `anyhow::Result<T>`)
/// names its error type.
pub trait ResultParts {
    /// The success type.
    type Ok;
    /// The error type.
    type Err;
}

impl<T, E> ResultParts for Result<T, E> {
    type Ok = T;
    type Err = E;
}

pub use crate::server::arg_decoder::{arg, ArgDecoder};

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
            Ok(payload) => crate::lowlevel::unwind::panic_message(payload),
            Err(e) => e.to_string(),
        };
        ErrorRoute::Internal(detail)
    })
}

/// Parses a JSON object literal the macro already checked.
pub fn json_object(text: &str) -> JsonObject {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// Builds a generated tool: `tools/list` shows the schema's listed form, calls are checked
/// against its validated form (see [`ArgsSchema`](crate::server::ArgsSchema)). If it does not
/// compile (an invalid `pattern`), that is a mistake in the program, reported when the server
/// is built.
pub fn tool_def<S: Send + Sync + 'static>(
    name: &str,
    schema: crate::server::ArgsSchema,
    handler: crate::server::ToolHandler<S>,
) -> crate::server::ToolDef<S> {
    let straight = schema.decoded_straight();
    let (listed, validated) = schema.build();
    match crate::server::ToolDef::listed_and_validated(name, listed, Some(&validated), handler) {
        Ok(def) => def.decoded_straight(straight),
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

/// Runs a plain (non-async) resource or prompt function off the async executor; a panic is an
/// internal error.
pub async fn run_blocking_plain<T, F>(f: F) -> Result<T, crate::McpError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    run_blocking(f).await.map_err(|route| match route {
        ErrorRoute::Protocol(e) => e,
        ErrorRoute::Tool(m) | ErrorRoute::Argument(m) | ErrorRoute::Internal(m) => {
            crate::McpError::internal(m)
        }
    })
}

/// Takes a URI template variable and parses it; one that does not parse names no resource.
pub fn uri_var<T: std::str::FromStr>(
    vars: &mut std::collections::BTreeMap<String, String>,
    name: &str,
) -> Result<T, crate::server::ReadFailure> {
    vars.remove(name)
        .and_then(|v| v.parse().ok())
        .ok_or(crate::server::ReadFailure::NotFound)
}

/// Takes an optional URI template variable (a query parameter).
pub fn uri_var_opt<T: std::str::FromStr>(
    vars: &mut std::collections::BTreeMap<String, String>,
    name: &str,
) -> Result<Option<T>, crate::server::ReadFailure> {
    match vars.remove(name) {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| crate::server::ReadFailure::NotFound),
    }
}

/// Builds a generated resource (its template was checked by the macro).
pub fn resource_def<S: Send + Sync + 'static>(
    uri: &str,
    name: &str,
    handler: crate::server::ResourceHandler<S>,
) -> crate::server::ResourceDef<S> {
    match crate::server::ResourceDef::with_handler(uri, name, handler) {
        Ok(def) => def,
        Err(e) => panic!(
            "resource `{name}` has an invalid URI template: {}",
            e.message()
        ),
    }
}
