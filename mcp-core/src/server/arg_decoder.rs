//! [`ArgDecoder`]: how the code `#[tool]` generates declares one argument in the schema and
//! takes it out of a call's arguments (reached by generated code through `modelctx::__private`).

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::arguments::{Arguments, Slot};
use super::output::ErrorRoute;
use crate::error::echo_capped;

/// Decodes one argument; built (and its type checked) once per tool, so a parameter type
/// that cannot be an argument gets exactly one error.
pub struct ArgDecoder<T> {
    decode: fn(Value) -> Result<T, serde_json::Error>,
    /// From the client's text (see [`Arguments`]).
    decode_text: fn(&str) -> Result<T, serde_json::Error>,
    /// `null` is `None` (or the default); otherwise the schema refuses it.
    nullable: bool,
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

fn decode_text<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(text)
}

/// Types whose decoding from the client's text checks all their schema checks: the schema of
/// each (a JSON type, and the range of a fixed-size integer) accepts exactly what decodes.
/// Told by [`std::any::type_name`]: a name that changed would only send calls the checked way.
const DECODED_STRAIGHT: &[&str] = &[
    "i8",
    "i16",
    "i32",
    "i64",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "usize",
    "f32",
    "f64",
    "bool",
    "alloc::string::String",
];

/// Adds parameter `name` to the schema (as `T`, or as `Option<T>` when `nullable`: an
/// `Option` parameter accepts `null`, though its listed form is the plain `T`) and returns its
/// decoder.
pub fn arg<T: DeserializeOwned + schemars::JsonSchema>(
    schema: &mut crate::server::ArgsSchema,
    name: &str,
    spec: crate::server::ArgSpec,
    nullable: bool,
) -> ArgDecoder<T> {
    // With no constraint of its own, an argument of such a type may be decoded straight from
    // the client's text; any other argument sends every call of its tool through the schema.
    let straight =
        spec.constraints.is_empty() && DECODED_STRAIGHT.contains(&std::any::type_name::<T>());
    if nullable {
        schema.arg_of_tool::<Option<T>>(name, spec, straight);
    } else {
        schema.arg_of_tool::<T>(name, spec, straight);
    }
    ArgDecoder {
        decode: decode_value::<T>,
        decode_text: decode_text::<T>,
        nullable,
    }
}

impl<T> ArgDecoder<T> {
    /// A decoder that refuses every value (for a type that is not an argument).
    pub(crate) fn refusing() -> Self {
        Self {
            decode: |_| Err(not_an_argument()),
            decode_text: |_| Err(not_an_argument()),
            nullable: false,
        }
    }

    fn decode(&self, name: &str, value: Value) -> Result<T, ErrorRoute> {
        (self.decode)(value).map_err(|e| refused(name, &e))
    }

    fn decode_text(&self, name: &str, text: &str) -> Result<T, ErrorRoute> {
        (self.decode_text)(text).map_err(|e| refused(name, &e))
    }

    /// Takes a required argument (absent decodes from `null`).
    pub fn take(&self, args: &mut Arguments, name: &str) -> Result<T, ErrorRoute> {
        match args.slot(name) {
            Slot::Value(value) => self.decode(name, value.unwrap_or(Value::Null)),
            Slot::Text(Some(text)) => self.decode_text(name, text),
            Slot::Text(None) => Err(missing(name)),
        }
    }

    /// Takes an optional argument: absent or `null` is `None`.
    pub fn take_opt(&self, args: &mut Arguments, name: &str) -> Result<Option<T>, ErrorRoute> {
        match args.slot(name) {
            Slot::Value(None | Some(Value::Null)) | Slot::Text(None) => Ok(None),
            Slot::Value(Some(value)) => self.decode(name, value).map(Some),
            Slot::Text(Some("null")) => self.null(name).map(|()| None),
            Slot::Text(Some(text)) => self.decode_text(name, text).map(Some),
        }
    }

    /// Takes an argument with a default for when it is absent or `null`.
    pub fn take_or(
        &self,
        args: &mut Arguments,
        name: &str,
        default: impl FnOnce() -> T,
    ) -> Result<T, ErrorRoute> {
        match args.slot(name) {
            Slot::Value(None | Some(Value::Null)) | Slot::Text(None) => Ok(default()),
            Slot::Value(Some(value)) => self.decode(name, value),
            Slot::Text(Some("null")) => self.null(name).map(|()| default()),
            Slot::Text(Some(text)) => self.decode_text(name, text),
        }
    }

    /// `null` in the client's text: fine where the schema accepts it (an `Option` parameter);
    /// elsewhere refused, so the call goes the checked way, where the schema says why.
    fn null(&self, name: &str) -> Result<(), ErrorRoute> {
        match self.nullable {
            true => Ok(()),
            false => Err(ErrorRoute::Argument(format!("{name}: null"))),
        }
    }
}

fn not_an_argument() -> serde_json::Error {
    serde::de::Error::custom("this parameter is not an argument")
}

fn refused(name: &str, e: &serde_json::Error) -> ErrorRoute {
    ErrorRoute::Argument(format!("{name}: {}", echo_capped(&e.to_string())))
}

fn missing(name: &str) -> ErrorRoute {
    ErrorRoute::Argument(format!("{name}: missing"))
}
