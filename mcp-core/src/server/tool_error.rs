//! [`ToolError`]: a tool's expected failure, sent as an `isError` result the model reads.

use std::fmt;

use crate::error::McpError;

/// A failure the model should read and can act on (`isError: true` with this text).
///
/// `?` on an [`McpError`] inside a tool that returns `ToolError` keeps the protocol meaning: a
/// pending input request (from `ctx.elicit`, `ctx.sample`, ...) still pauses the call and a
/// protocol error is still a JSON-RPC error; an internal failure is logged and the model reads
/// `Error executing tool <name>`, as when the tool returns it directly.
///
/// ```
/// use modelctx_core::server::ToolError;
///
/// fn check(limit: u32) -> Result<u32, ToolError> {
///     if limit == 0 {
///         return Err(ToolError::new("limit must be at least 1"));
///     }
///     Ok(limit)
/// }
/// assert_eq!(check(0).unwrap_err().to_string(), "limit must be at least 1");
/// ```
#[derive(Debug)]
pub struct ToolError {
    repr: Repr,
}

#[derive(Debug)]
enum Repr {
    Message(String),
    Protocol(McpError),
}

impl ToolError {
    /// A tool error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            repr: Repr::Message(message.into()),
        }
    }

    /// The message the model reads (for a carried protocol error, its message).
    pub fn message(&self) -> std::borrow::Cow<'_, str> {
        match &self.repr {
            Repr::Message(m) => std::borrow::Cow::Borrowed(m),
            Repr::Protocol(e) => e.message(),
        }
    }

    /// The message, by value.
    pub fn into_message(self) -> String {
        match self.repr {
            Repr::Message(m) => m,
            Repr::Protocol(e) => e.message().into_owned(),
        }
    }

    /// The carried protocol error (or pending input request), or the message the model reads.
    pub(crate) fn into_protocol(self) -> Result<McpError, String> {
        match self.repr {
            Repr::Message(m) => Err(m),
            Repr::Protocol(e) => Ok(e),
        }
    }
}

impl PartialEq for ToolError {
    fn eq(&self, other: &Self) -> bool {
        self.message() == other.message()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

impl From<McpError> for ToolError {
    fn from(error: McpError) -> Self {
        Self {
            repr: Repr::Protocol(error),
        }
    }
}
