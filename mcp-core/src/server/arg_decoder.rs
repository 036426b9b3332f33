//! [`ArgDecoder`]: how the code `#[tool]` generates declares one argument in the schema and
//! takes it out of a call's arguments (reached by generated code through `modelctx::__private`).

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::output::ErrorRoute;
use crate::error::echo_capped;
use crate::types::JsonObject;

/// Decodes one argument; built (and its type checked) once per tool, so a parameter type
/// that cannot be an argument gets exactly one error.
pub struct ArgDecoder<T> {
    decode: fn(Value) -> Result<T, serde_json::Error>,
}

impl<T> std::fmt::Debug for ArgDecoder<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ArgDecoder")
            .field(&std::any::type_name::<T>())
            .finish()
    }
}

impl<T> Clone for ArgDecoder<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ArgDecoder<T> {}

fn decode_value<T: DeserializeOwned>(value: Value) -> Result<T, serde_json::Error> {
    T::deserialize(value)
}

/// Adds parameter `name` to the schema (as `T`, or as `Option<T>` when `nullable`: an
/// `Option` parameter accepts `null`, though its listed form is the plain `T`) and returns its
/// decoder.
pub fn arg<T: DeserializeOwned + schemars::JsonSchema>(
    schema: &mut crate::server::ArgsSchema,
    name: &str,
    spec: crate::server::ArgSpec,
    nullable: bool,
) -> ArgDecoder<T> {
    if nullable {
        schema.arg::<Option<T>>(name, spec);
    } else {
        schema.arg::<T>(name, spec);
    }
    ArgDecoder {
        decode: decode_value::<T>,
    }
}

impl<T> ArgDecoder<T> {
    /// A decoder that refuses every value (for a type that is not an argument).
    pub(crate) fn refusing() -> Self {
        Self {
            decode: |_| {
                Err(serde::de::Error::custom(
                    "this parameter is not an argument",
                ))
            },
        }
    }

    fn decode(&self, name: &str, value: Value) -> Result<T, ErrorRoute> {
        (self.decode)(value)
            .map_err(|e| ErrorRoute::Argument(format!("{name}: {}", echo_capped(&e.to_string()))))
    }

    /// Takes a required argument (absent decodes from `null`).
    pub fn take(&self, args: &mut JsonObject, name: &str) -> Result<T, ErrorRoute> {
        self.decode(
            name,
            crate::members::take(args, name).unwrap_or(Value::Null),
        )
    }

    /// Takes an optional argument: absent or `null` is `None`.
    pub fn take_opt(&self, args: &mut JsonObject, name: &str) -> Result<Option<T>, ErrorRoute> {
        match crate::members::take(args, name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => self.decode(name, value).map(Some),
        }
    }

    /// Takes an argument with a default for when it is absent or `null`.
    pub fn take_or(
        &self,
        args: &mut JsonObject,
        name: &str,
        default: impl FnOnce() -> T,
    ) -> Result<T, ErrorRoute> {
        match crate::members::take(args, name) {
            None | Some(Value::Null) => Ok(default()),
            Some(value) => self.decode(name, value),
        }
    }
}
