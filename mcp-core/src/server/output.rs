//! Turning whatever a tool returns into a `CallToolResult`, chosen by the return type at the
//! call site the macro generates (autoref specialization): content types pass through as
//! content; any other `Serialize + JsonSchema` type becomes `structuredContent` plus the same
//! value as JSON text, with its `outputSchema`.

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::tool_error::ToolError;
use crate::error::McpError;
use crate::types::*;

/// The receiver of the autoref probes: how many `&` it takes to find an impl picks the path.
pub struct Out<T>(T);

impl<T> std::fmt::Debug for Out<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Out")
            .field(&std::any::type_name::<T>())
            .finish()
    }
}

impl<T> Out<T> {
    /// Wraps a value.
    pub fn new(value: T) -> Self {
        Self(value)
    }
}

/// Types that are content already (text, blocks, a whole `CallToolResult`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this return type cannot become a tool result",
    note = "return a String, a content block, a CallToolResult, or a type that implements serde::Serialize and schemars::JsonSchema"
)]
pub trait IntoContent {
    /// The result for this value.
    fn into_call_result(self) -> CallToolResult;
}

impl IntoContent for String {
    fn into_call_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoContent for &str {
    fn into_call_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoContent for () {
    fn into_call_result(self) -> CallToolResult {
        CallToolResult::new(Vec::new())
    }
}

impl IntoContent for CallToolResult {
    fn into_call_result(self) -> CallToolResult {
        self
    }
}

impl IntoContent for ContentBlock {
    fn into_call_result(self) -> CallToolResult {
        CallToolResult::new(vec![self])
    }
}

impl IntoContent for Vec<ContentBlock> {
    fn into_call_result(self) -> CallToolResult {
        CallToolResult::new(self)
    }
}

macro_rules! block_content {
    ($($t:ident),*) => {$(
        impl IntoContent for $t {
            fn into_call_result(self) -> CallToolResult {
                CallToolResult::new(vec![ContentBlock::$t(self)])
            }
        }
    )*};
}

/// `ContentBlock::Text(TextContent)` etc. share their variant's name minus `Content`.
mod variants {
    pub(crate) use crate::types::AudioContent as Audio;
    pub(crate) use crate::types::EmbeddedResource as Resource;
    pub(crate) use crate::types::ImageContent as Image;
    pub(crate) use crate::types::TextContent as Text;
}
use variants::{Audio, Image, Resource, Text};
block_content!(Text, Image, Audio, ResourceLink, Resource);

/// Converts a tool's return value into its result.
pub type Convert<T> = fn(T) -> CallToolResult;

/// How a return type becomes a result, and its output schema (`None` for content).
pub type Conversion<T> = (Convert<T>, Option<(Value, bool)>);

/// Asks, once per tool, how its return type `T` becomes a result (autoref specialization:
/// content types are preferred, any other `Serialize + JsonSchema` type is structured).
pub struct Probe<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Probe<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Probe")
            .field(&std::any::type_name::<T>())
            .finish()
    }
}

impl<T> Probe<T> {
    /// A probe for `T`.
    pub fn new() -> Out<Probe<T>> {
        Out::new(Probe(PhantomData))
    }
}

/// A `Result` returned through a type alias: the macro reads the success and error types from
/// the signature, so it needs `Result<..>` written there.
#[diagnostic::on_unimplemented(
    message = "a tool that returns a `Result` must write `Result<..>` in its signature, not a type alias",
    label = "write the `Result<T, E>` this alias stands for here",
    note = "#[tool] reads the success and error types of the result from the signature; behind an alias it cannot"
)]
pub trait ResultSpelledOut {}

/// A `Result` the macro did not recognize (preferred: implemented on `&&&Out<Probe<Result>>`).
pub trait ProbeResultAlias<T> {
    /// Always an error: see [`ResultSpelledOut`].
    fn conversion(self) -> Conversion<T>
    where
        T: ResultSpelledOut;
}

impl<T, E> ProbeResultAlias<Result<T, E>> for &&&Out<Probe<Result<T, E>>> {
    fn conversion(self) -> Conversion<Result<T, E>>
    where
        Result<T, E>: ResultSpelledOut,
    {
        unreachable!("`ResultSpelledOut` has no implementation")
    }
}

/// The content path (preferred: implemented on `&&Out<Probe<T>>`).
pub trait ProbeContent<T> {
    /// How `T` becomes a result.
    fn conversion(self) -> Conversion<T>;
}

impl<T: IntoContent> ProbeContent<T> for &&Out<Probe<T>> {
    fn conversion(self) -> Conversion<T> {
        (IntoContent::into_call_result, None)
    }
}

/// A type a tool may return as structured content.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this return type cannot become a tool result",
    note = "return a String, a content block, a CallToolResult, or a type that implements serde::Serialize and schemars::JsonSchema (it becomes structuredContent)"
)]
pub trait Returnable: Serialize + JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: Serialize + JsonSchema> Returnable for T {}

/// The structured path. Implemented for every type with the requirement on the method, so an
/// unsuitable return type gets exactly one error, naming [`Returnable`].
pub trait ProbeStructured<T> {
    /// How `T` becomes a result.
    fn conversion(self) -> Conversion<T>
    where
        T: Returnable;
}

impl<T> ProbeStructured<T> for &Out<Probe<T>> {
    fn conversion(self) -> Conversion<T>
    where
        T: Returnable,
    {
        (structured::<T>, Some(super::schema::output_schema::<T>()))
    }
}

fn structured<T: Serialize>(value: T) -> CallToolResult {
    match serde_json::to_value(&value) {
        Ok(json) => CallToolResult::text(json.to_string()).with_structured(json),
        Err(e) => {
            tracing::error!(error = %e, "a tool result could not be serialized");
            CallToolResult::error("Error executing tool: its result could not be serialized")
        }
    }
}

/// How an error returned by a tool is reported.
#[derive(Debug)]
pub enum ErrorRoute {
    /// The model reads it (`isError`).
    Tool(String),
    /// An argument did not decode: the model reads it (`isError`), with integers the client
    /// wrote out of range quoted as written.
    Argument(String),
    /// A JSON-RPC error.
    Protocol(McpError),
    /// Logged; the model reads `Error executing tool <name>`.
    Internal(String),
}

/// Routes a tool's error type.
pub type Route<E> = fn(E) -> ErrorRoute;

/// `ToolError`: the model reads it (preferred).
pub trait ProbeToolError {
    /// The route (`fallback` is for other error types).
    fn route(self, fallback: Route<ToolError>) -> Route<ToolError>;
}

impl ProbeToolError for &&&Out<Probe<ToolError>> {
    fn route(self, _: Route<ToolError>) -> Route<ToolError> {
        |e| match e.into_protocol() {
            Ok(carried) => mcp_error_route(carried),
            Err(message) => ErrorRoute::Tool(message),
        }
    }
}

/// `McpError`: a JSON-RPC error (internal failures are logged instead).
pub trait ProbeMcpError {
    /// The route (`fallback` is for other error types).
    fn route(self, fallback: Route<McpError>) -> Route<McpError>;
}

impl ProbeMcpError for &&Out<Probe<McpError>> {
    fn route(self, _: Route<McpError>) -> Route<McpError> {
        mcp_error_route
    }
}

/// Internal failures are logged; protocol errors and pending input requests pass through.
fn mcp_error_route(e: McpError) -> ErrorRoute {
    if e.is_internal() && e.as_input_required().is_none() {
        ErrorRoute::Internal(e.message().into_owned())
    } else {
        ErrorRoute::Protocol(e)
    }
}

/// An error type a tool may fail with besides `ToolError` and `McpError`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error type",
    label = "this error type does not implement Display",
    note = "return ToolError (the model reads the message), McpError (a JSON-RPC error), or an error that implements Display (logged; the model reads `Error executing tool <name>`)"
)]
pub trait ToolFailure: Sized {
    /// Logged; the model reads `Error executing tool <name>`.
    fn logged() -> Route<Self>;
}

#[diagnostic::do_not_recommend]
impl<E: std::fmt::Display> ToolFailure for E {
    fn logged() -> Route<E> {
        |e| ErrorRoute::Internal(e.to_string())
    }
}

/// Any other error: the fallback, which the generated code names as
/// `<E as ToolFailure>::logged`, so an error type without `Display` is one error at the type.
pub trait ProbeFailure<E> {
    /// The route.
    fn route(self, fallback: Route<E>) -> Route<E>;
}

impl<E> ProbeFailure<E> for &Out<Probe<E>> {
    fn route(self, fallback: Route<E>) -> Route<E> {
        fallback
    }
}
