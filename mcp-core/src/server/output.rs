//! Turning whatever a tool returns into a `CallToolResult`, chosen by the return type at the
//! call site the macro generates (autoref specialization): content types pass through as
//! content; any other `Serialize + JsonSchema` type becomes `structuredContent` plus the same
//! value as JSON text, with its `outputSchema`.

use std::cell::Cell;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::tool_error::ToolError;
use crate::error::McpError;
use crate::types::*;

/// A return value on its way to becoming a result (taken exactly once).
pub struct Out<T>(Cell<Option<T>>);

impl<T> Out<T> {
    /// Wraps a value.
    pub fn new(value: T) -> Self {
        Self(Cell::new(Some(value)))
    }

    fn take(&self) -> T {
        match self.0.take() {
            Some(v) => v,
            // The generated code calls exactly one conversion exactly once.
            None => unreachable!("a tool output is converted once"),
        }
    }
}

/// What a tool returned, before the era-specific shaping.
pub struct ToolOutput {
    /// The result.
    pub result: CallToolResult,
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
    pub use crate::types::AudioContent as Audio;
    pub use crate::types::EmbeddedResource as Resource;
    pub use crate::types::ImageContent as Image;
    pub use crate::types::TextContent as Text;
}
use variants::{Audio, Image, Resource, Text};
block_content!(Text, Image, Audio, ResourceLink, Resource);

/// The content path (preferred by autoref: implemented on `&&Out<T>`).
pub trait ViaContent {
    /// Converts.
    fn into_tool_output(self) -> ToolOutput;
    /// No output schema for content.
    fn output_schema(self) -> Option<(Value, bool)>;
}

impl<T: IntoContent> ViaContent for &&Out<T> {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput {
            result: self.take().into_call_result(),
        }
    }
    fn output_schema(self) -> Option<(Value, bool)> {
        None
    }
}

/// The structured path (taken when the content path does not apply).
pub trait ViaStructured {
    /// Converts.
    fn into_tool_output(self) -> ToolOutput;
    /// The output schema of the type and whether it is an object.
    fn output_schema(self) -> Option<(Value, bool)>;
}

impl<T: Serialize + JsonSchema> ViaStructured for &Out<T> {
    fn into_tool_output(self) -> ToolOutput {
        let value = self.take();
        let result = match serde_json::to_value(&value) {
            Ok(json) => CallToolResult::text(json.to_string()).with_structured(json),
            Err(e) => {
                tracing::error!(error = %e, "a tool result could not be serialized");
                CallToolResult::error("Error executing tool: its result could not be serialized")
            }
        };
        ToolOutput { result }
    }
    fn output_schema(self) -> Option<(Value, bool)> {
        Some(super::schema::output_schema::<T>())
    }
}

/// Asks for the output schema of `T` without a value.
pub struct Probe<T>(PhantomData<fn() -> T>);

impl<T> Probe<T> {
    /// A probe for `T`.
    pub fn new() -> Out<Probe<T>> {
        Out::new(Probe(PhantomData))
    }
}

impl<T: IntoContent> ViaContent for &&Out<Probe<T>> {
    fn into_tool_output(self) -> ToolOutput {
        unreachable!("a probe is never converted")
    }
    fn output_schema(self) -> Option<(Value, bool)> {
        None
    }
}

impl<T: Serialize + JsonSchema> ViaStructured for &Out<Probe<T>> {
    fn into_tool_output(self) -> ToolOutput {
        unreachable!("a probe is never converted")
    }
    fn output_schema(self) -> Option<(Value, bool)> {
        Some(super::schema::output_schema::<T>())
    }
}

/// How an error returned by a tool is reported.
pub enum ErrorRoute {
    /// The model reads it (`isError`).
    Tool(String),
    /// A JSON-RPC error.
    Protocol(McpError),
    /// Logged; the model reads `Error executing tool <name>`.
    Internal(String),
}

/// `ToolError` (preferred).
pub trait ViaToolError {
    /// Routes the error.
    fn route(self) -> ErrorRoute;
}

impl ViaToolError for &&&Out<ToolError> {
    fn route(self) -> ErrorRoute {
        ErrorRoute::Tool(self.take().into_message())
    }
}

/// `McpError`.
pub trait ViaMcpError {
    /// Routes the error.
    fn route(self) -> ErrorRoute;
}

impl ViaMcpError for &&Out<McpError> {
    fn route(self) -> ErrorRoute {
        let e = self.take();
        if e.is_internal() {
            ErrorRoute::Internal(e.message().into_owned())
        } else {
            ErrorRoute::Protocol(e)
        }
    }
}

/// Any other error type.
pub trait ViaDisplay {
    /// Routes the error.
    fn route(self) -> ErrorRoute;
}

impl<E: std::fmt::Display> ViaDisplay for &Out<E> {
    fn route(self) -> ErrorRoute {
        ErrorRoute::Internal(self.take().to_string())
    }
}
