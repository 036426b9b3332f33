//! Support for the code `#[tool]` generates. Not a public API: names and shapes may change in
//! any release.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::echo_capped;
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

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + schemars::JsonSchema> ToolArgument for T {}

/// A type `#[arg(range(..))]` fits: a number (checked where the macro cannot tell by the
/// type's spelling, e.g. an alias).
#[diagnostic::on_unimplemented(
    message = "`range` applies to numbers; `{Self}` is not a number",
    label = "`range` needs an integer or float parameter",
    note = "to limit the length of text or a list, write `length(..)` instead"
)]
pub trait Number {
    /// Used by the generated check.
    const FITS: () = ();
}

/// A type a `range` with fractional bounds (`range(0.5..)`) fits.
#[diagnostic::on_unimplemented(
    message = "`range` has a fractional bound but `{Self}` is not a float",
    label = "this range needs an `f32` or `f64` parameter",
    note = "write whole-number bounds for an integer parameter, or make the parameter `f64`"
)]
pub trait Float {
    /// Used by the generated check.
    const FITS: () = ();
}

/// A type `#[arg(length(..))]` fits: text or a list.
#[diagnostic::on_unimplemented(
    message = "`length` applies to text and lists; `{Self}` is neither",
    label = "`length` needs a String or a list parameter",
    note = "to bound a number, write `range(..)` instead"
)]
pub trait TextOrList {
    /// Used by the generated check.
    const FITS: () = ();
}

/// A type `#[arg(pattern = "...")]` fits: text.
#[diagnostic::on_unimplemented(
    message = "`pattern` applies to text; `{Self}` is not text",
    label = "`pattern` needs a String parameter",
    note = "to bound a number, write `range(..)` instead"
)]
pub trait Text {
    /// Used by the generated check.
    const FITS: () = ();
}

macro_rules! markers {
    ($trait:ident: $($t:ty),*) => {$(
        impl $trait for $t {}
    )*};
}
markers!(Number: i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);
markers!(Number: std::num::NonZeroI8, std::num::NonZeroI16, std::num::NonZeroI32, std::num::NonZeroI64, std::num::NonZeroI128, std::num::NonZeroIsize);
markers!(Number: std::num::NonZeroU8, std::num::NonZeroU16, std::num::NonZeroU32, std::num::NonZeroU64, std::num::NonZeroU128, std::num::NonZeroUsize);
markers!(Float: f32, f64);
markers!(Text: String, str, Box<str>, std::sync::Arc<str>, std::borrow::Cow<'static, str>);
markers!(TextOrList: String, str, Box<str>, std::sync::Arc<str>, std::borrow::Cow<'static, str>);
impl<T: Number> Number for Option<T> {}
impl<T: Float> Float for Option<T> {}
impl<T: Text> Text for Option<T> {}
impl<T: TextOrList> TextOrList for Option<T> {}
impl<T> TextOrList for Vec<T> {}
impl<T> TextOrList for std::collections::VecDeque<T> {}
impl<T> TextOrList for std::collections::BTreeSet<T> {}
impl<T, H> TextOrList for std::collections::HashSet<T, H> {}
impl<T, const N: usize> TextOrList for [T; N] {}
impl<T> TextOrList for Box<[T]> {}

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

/// Decodes one argument; built (and its type checked) once per tool, so a parameter type
/// that cannot be an argument gets exactly one error.
pub struct ArgDecoder<T> {
    decode: fn(Value) -> Result<T, serde_json::Error>,
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

/// A `RequestContext` parameter spelled through a type alias: the macro finds the context by
/// its name in the signature, so it took this one for an argument.
#[diagnostic::on_unimplemented(
    message = "a `RequestContext` parameter must be written `RequestContext<..>` in the signature, not through a type alias",
    label = "write `{Self}` here",
    note = "#[tool] recognizes the request context by its name; behind an alias it would be taken for a JSON argument"
)]
pub trait ContextSpelledOut {}

/// Chooses how a parameter is read, once per parameter (autoref specialization): a
/// `RequestContext` the macro did not recognize is an error that says how to write it.
pub struct ArgProbe<T>(std::marker::PhantomData<fn() -> T>);

impl<T> ArgProbe<T> {
    /// A probe for `T`.
    pub fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

/// The context path (preferred: implemented on `&&ArgProbe<RequestContext<S>>`).
pub trait ProbeContextArg<T> {
    /// Always an error: see [`ContextSpelledOut`].
    fn arg(
        self,
        schema: &mut crate::server::ArgsSchema,
        name: &str,
        spec: crate::server::ArgSpec,
        nullable: bool,
    ) -> ArgDecoder<T>
    where
        T: ContextSpelledOut;
}

impl<S> ProbeContextArg<crate::lowlevel::RequestContext<S>>
    for &&ArgProbe<crate::lowlevel::RequestContext<S>>
{
    fn arg(
        self,
        _: &mut crate::server::ArgsSchema,
        _: &str,
        _: crate::server::ArgSpec,
        _: bool,
    ) -> ArgDecoder<crate::lowlevel::RequestContext<S>>
    where
        crate::lowlevel::RequestContext<S>: ContextSpelledOut,
    {
        unreachable!("`ContextSpelledOut` has no implementation")
    }
}

/// The argument path: any type that is `Deserialize + JsonSchema`.
pub trait ProbeArg<T> {
    /// Adds the argument to the schema and returns its decoder.
    fn arg(
        self,
        schema: &mut crate::server::ArgsSchema,
        name: &str,
        spec: crate::server::ArgSpec,
        nullable: bool,
    ) -> ArgDecoder<T>
    where
        T: ToolArgument;
}

impl<T> ProbeArg<T> for &ArgProbe<T> {
    fn arg(
        self,
        schema: &mut crate::server::ArgsSchema,
        name: &str,
        spec: crate::server::ArgSpec,
        nullable: bool,
    ) -> ArgDecoder<T>
    where
        T: ToolArgument,
    {
        arg(schema, name, spec, nullable)
    }
}

/// Adds parameter `name` to the schema (as `T`, or as `Option<T>` when `nullable`: an
/// `Option` parameter accepts `null`, though its listed form is the plain `T`) and returns its
/// decoder.
pub fn arg<T: ToolArgument>(
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
    fn decode(&self, name: &str, value: Value) -> Result<T, ErrorRoute> {
        (self.decode)(value)
            .map_err(|e| ErrorRoute::Argument(format!("{name}: {}", echo_capped(&e.to_string()))))
    }

    /// Takes a required argument (absent decodes from `null`).
    pub fn take(&self, args: &mut JsonObject, name: &str) -> Result<T, ErrorRoute> {
        self.decode(name, args.remove(name).unwrap_or(Value::Null))
    }

    /// Takes an optional argument: absent or `null` is `None`.
    pub fn take_opt(&self, args: &mut JsonObject, name: &str) -> Result<Option<T>, ErrorRoute> {
        match args.remove(name) {
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
        match args.remove(name) {
            None | Some(Value::Null) => Ok(default()),
            Some(value) => self.decode(name, value),
        }
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
    let (listed, validated) = schema.build();
    match crate::server::ToolDef::with_handler(name, listed, handler)
        .and_then(|def| def.validate_against(&validated))
    {
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
